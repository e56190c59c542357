import { expect } from 'chai';
import type { Grant, TakeAsk } from '../../src/limits/bucket';
import { FleetLimiter, storeFailure, type Admission, type FleetLimiterOptions, type StoreFailure } from '../../src/limits/fleet-limiter';
import { MemoryLimitStore } from '../../src/limits/memory-store';
import type { LimitStore } from '../../src/limits/store';

/** A shared store that can be taken away (every call fails, as when its server is down) and brought back. */
class FlakyStore implements LimitStore {
  down = false;
  /** An error the store answers with instead (a missing function), when set. */
  fault: Error | null = null;
  calls = 0;
  constructor(readonly inner = new MemoryLimitStore()) {}
  private check(): void {
    this.calls++;
    if (this.fault) throw this.fault;
    if (this.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED', syscall: 'connect' });
  }
  async take(bucket: string, ask: TakeAsk, now: number): Promise<Grant> {
    this.check();
    return this.inner.take(bucket, ask, now);
  }
  async give(bucket: string, rate: number, units: number, now: number): Promise<void> {
    this.check();
    return this.inner.give(bucket, rate, units, now);
  }
  async poll(id: string, minIntervalMs: number, now: number): Promise<number> {
    this.check();
    return this.inner.poll(id, minIntervalMs, now);
  }
  async probe(): Promise<void> {
    this.check();
  }
  async sweep(now: number): Promise<void> {
    this.check();
    return this.inner.sweep(now);
  }
  async close(): Promise<void> {}
}

/** The fleet's limits, seen from several processes (one FleetLimiter each) sharing one store, on one hand-moved clock. */
describe('fleet limiter', () => {
  let now = 1_000_000;
  const limiters: FleetLimiter[] = [];
  const logged: { level: 'warn' | 'info' | 'error'; msg: string }[] = [];
  const states: boolean[] = [];
  const causes: (StoreFailure | undefined)[] = [];
  beforeEach(() => {
    now = 1_000_000;
    logged.length = 0;
    states.length = 0;
    causes.length = 0;
  });
  afterEach(async () => {
    await Promise.all(limiters.map((l) => l.close()));
    limiters.length = 0;
  });

  function processes(store: LimitStore, count: number, leaseMs: number): FleetLimiter[] {
    const made = Array.from(
      { length: count },
      () =>
        new FleetLimiter(store, {
          now: () => now,
          leaseMs,
          probeMs: 3_600_000,
          sweepMs: 3_600_000,
          logger: {
            warn: (_o: unknown, msg: string) => void logged.push({ level: 'warn', msg }),
            info: (_o: unknown, msg: string) => void logged.push({ level: 'info', msg }),
            error: (_o: unknown, msg: string) => void logged.push({ level: 'error', msg }),
          } as unknown as FleetLimiterOptions['logger'],
          onStoreState: (up, cause) => {
            states.push(up);
            causes.push(cause);
          },
        }),
    );
    limiters.push(...made);
    return made;
  }

  /** Takes one unit from each process in turn until every one of them is refused; answers the admissions of each. */
  async function drain(procs: readonly FleetLimiter[], bucket: string, rate: number): Promise<number[]> {
    const admitted = procs.map(() => 0);
    const refused = new Set<number>();
    while (refused.size < procs.length) {
      for (const [i, p] of procs.entries()) {
        if (refused.has(i)) continue;
        const a: Admission = await p.take(bucket, rate, 1, 0);
        if (a.admitted) admitted[i]!++;
        else refused.add(i);
      }
    }
    return admitted;
  }

  it('admits a bucket of `rate` across processes together, however each leases, and refills at the rate', async () => {
    for (const leaseMs of [0, 1_000, 10_000]) {
      const procs = processes(new MemoryLimitStore(), 3, leaseMs);
      const admitted = await drain(procs, 'rpm:k', 60);
      expect(admitted.reduce((a, b) => a + b), `lease ${leaseMs} ms`).to.equal(60);
      for (const n of admitted) expect(n, 'every process had its share').to.be.greaterThan(0);
      now += 30_000;
      const later = await drain(procs, 'rpm:k', 60);
      // 30 s refill 30 units; a process may still hold a lease (at most one lease each) from before the refusal.
      expect(later.reduce((a, b) => a + b), `lease ${leaseMs} ms, refilled`).to.equal(30);
    }
  });

  it('lets concurrent requests of one process wait for the lease one of them is fetching, rather than each ask the store', async () => {
    const store = new FlakyStore();
    const [a, b] = processes(store, 2, 60_000) as [FleetLimiter, FleetLimiter];
    const atStart = store.calls; // each process's first connection
    // 2 a minute, leases of a minute: a's first take leases both units; its second waits for that lease.
    const both = await Promise.all([a.take('rpm:k', 2, 1, 0), a.take('rpm:k', 2, 1, 0), a.take('rpm:k', 2, 1, 0)]);
    expect(both.map((x) => x.admitted)).to.deep.equal([true, true, false]);
    expect((await b.take('rpm:k', 2, 1, 0)).admitted).to.equal(false);
    expect(store.calls - atStart, 'a asked the store once for its lease, once when it was spent; b once').to.equal(3);
  });

  it('refuses with the time until the next unit is due, and takes nothing', async () => {
    const [a, b] = processes(new MemoryLimitStore(), 2, 0) as [FleetLimiter, FleetLimiter];
    expect(await a.take('rpm:k', 2, 1, 0)).to.deep.equal({ admitted: true, waitMs: 0 });
    expect(await b.take('rpm:k', 2, 1, 0)).to.deep.equal({ admitted: true, waitMs: 0 });
    expect(await a.take('rpm:k', 2, 1, 0)).to.deep.equal({ admitted: false, retryAfterMs: 30_000 });
    now += 10_000;
    expect(await b.take('rpm:k', 2, 1, 0)).to.deep.equal({ admitted: false, retryAfterMs: 20_000 });
    // A turn promised ahead (web Q&A's wait): taken, with its wait; the next waiter queues behind it.
    expect(await b.take('rpm:k', 2, 1, 20_000)).to.deep.equal({ admitted: true, waitMs: 20_000 });
    expect(await a.take('rpm:k', 2, 1, 30_000)).to.deep.equal({ admitted: false, retryAfterMs: 50_000 });
  });

  it('hands a lease a process did not use back to the store with its next take', async () => {
    // 60 a minute, leases of 10 s: 10 units each.
    const [a, b] = processes(new MemoryLimitStore(), 2, 10_000) as [FleetLimiter, FleetLimiter];
    expect((await a.take('rpm:k', 60, 1, 0)).admitted).to.equal(true); // a holds 10 more
    expect(await drain([b], 'rpm:k', 60)).to.deep.equal([49]);
    now += 10_001; // 10.001 units refilled; a's lease expired, unused
    expect((await a.take('rpm:k', 60, 1, 0)).admitted).to.equal(true); // gives back 10, leases 10 again
    // Without the 10 handed back, a's take would have left b nothing.
    expect(await drain([b], 'rpm:k', 60)).to.deep.equal([9]);
  });

  it('charges usage over what was taken, and hands back usage under it, to every process', async () => {
    const [a, b] = processes(new MemoryLimitStore(), 2, 0) as [FleetLimiter, FleetLimiter];
    expect((await a.take('tpm:k', 1_000, 600, 0)).admitted).to.equal(true);
    await a.give('tpm:k', 1_000, -300); // used 900 of the 600 counted
    expect(await b.take('tpm:k', 1_000, 200, 0)).to.deep.equal({ admitted: false, retryAfterMs: 6_000 });
    await a.give('tpm:k', 1_000, 500); // a later request used 500 fewer than counted
    expect(await b.take('tpm:k', 1_000, 600, 0)).to.deep.equal({ admitted: true, waitMs: 0 });
  });

  it('holds a poll interval across processes', async () => {
    const [a, b] = processes(new MemoryLimitStore(), 2, 1_000) as [FleetLimiter, FleetLimiter];
    expect(await a.poll('poll:image:k:t1', 5_000)).to.equal(0);
    expect(await b.poll('poll:image:k:t1', 5_000)).to.equal(5_000);
    expect(await b.poll('poll:image:k:t2', 5_000), 'another task').to.equal(0);
    now += 4_000;
    expect(await a.poll('poll:image:k:t1', 5_000)).to.equal(1_000);
    now += 1_000;
    expect(await b.poll('poll:image:k:t1', 5_000)).to.equal(0);
  });

  it('limits each process on its own while the store is away, says so once, and shares again once it answers', async () => {
    const store = new FlakyStore();
    const [a, b] = processes(store, 2, 0) as [FleetLimiter, FleetLimiter];
    expect(await drain([a, b], 'rpm:k', 5)).to.deep.equal([3, 2]);

    store.down = true;
    now += 60_000;
    // Each process counts alone: each admits the whole rate.
    expect(await drain([a, b], 'rpm:k', 5)).to.deep.equal([5, 5]);
    expect(await a.poll('poll:x', 1_000)).to.equal(0);
    expect(await a.poll('poll:x', 1_000)).to.equal(1_000);
    expect(await b.poll('poll:x', 1_000), 'polls are counted per process too').to.equal(0);
    expect(a.shared).to.equal(false);
    expect(logged.filter((l) => l.level === 'warn')).to.have.length(2); // once per process, not once per request
    expect(states).to.deep.equal([false, false]);
    const callsWhileDown = store.calls;
    await a.take('rpm:other', 5, 1, 0);
    expect(store.calls, 'no store call per request while it is away').to.equal(callsWhileDown);

    await a.probe();
    expect(a.shared, 'still away').to.equal(false);
    store.down = false;
    for (let i = 0; i < 3; i++) await Promise.all([a.probe(), b.probe()]);
    expect(a.shared && b.shared).to.equal(true);
    expect(causes).to.deep.equal(['outage', 'outage', undefined, undefined]);
    expect(states).to.deep.equal([false, false, true, true]);
    expect(logged.filter((l) => l.level === 'info')).to.have.length(2);
    now += 60_000;
    expect(await drain([a, b], 'rpm:k', 5)).to.deep.equal([3, 2]);
  });

  it('counts with the fleet again only after probes in a row answer, and keeps what it counted alone across a recovery', async () => {
    const store = new FlakyStore();
    const [a] = processes(store, 1, 0) as [FleetLimiter];
    store.down = true;
    expect(await drain([a], 'rpm:k', 5)).to.deep.equal([5]);
    store.down = false;
    await a.probe();
    await a.probe();
    store.down = true;
    await a.probe();
    expect(a.shared, 'a failure in between starts the count again').to.equal(false);
    store.down = false;
    for (let i = 0; i < 2; i++) await a.probe();
    expect(a.shared, 'two answers are not enough').to.equal(false);
    await a.probe();
    expect(a.shared).to.equal(true);
    // The store fails again at once: the process's own bucket still holds the 5 it admitted alone.
    store.down = true;
    expect(await drain([a], 'rpm:k', 5)).to.deep.equal([0]);
    expect(states).to.deep.equal([false, true, false]);
  });

  it('takes an error the store answers for a fault: logged as an error, not counted as an outage, and no recovery while it lasts', async () => {
    const store = new FlakyStore();
    const [a] = processes(store, 1, 0) as [FleetLimiter];
    store.fault = Object.assign(new Error('function limit_take(unknown) does not exist'), { code: '42883', severity: 'ERROR' });
    expect(await drain([a], 'rpm:k', 2), 'limited by the process meanwhile').to.deep.equal([2]);
    expect(logged.map((l) => l.level)).to.deep.equal(['error']);
    expect(causes).to.deep.equal(['fault']);
    for (let i = 0; i < 5; i++) await a.probe();
    expect(a.shared, 'a probe calls what a take calls, so it fails too').to.equal(false);
    expect(states).to.deep.equal([false]);
  });

  it('tells outages (connection, timeout) from faults (errors the database answered)', () => {
    expect(storeFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', syscall: 'connect' }))).to.equal('outage');
    expect(storeFailure(new Error('Connection terminated unexpectedly'))).to.equal('outage');
    expect(storeFailure(new Error('Query read timeout'))).to.equal('outage');
    expect(storeFailure(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014', severity: 'ERROR' }))).to.equal('outage');
    expect(storeFailure(Object.assign(new Error('the database system is shutting down'), { code: '57P01', severity: 'FATAL' }))).to.equal('outage');
    expect(storeFailure(Object.assign(new Error('function limit_take does not exist'), { code: '42883', severity: 'ERROR' }))).to.equal('fault');
    expect(storeFailure(new TypeError('x is undefined'))).to.equal('fault');
  });

  it('charges usage beyond what a lease holds to the store at once, so every process sees it', async () => {
    // The reviewer's case: 60,000 tokens a minute, leases of 1 s (1,000 tokens).
    const [a, b] = processes(new MemoryLimitStore(), 2, 1_000) as [FleetLimiter, FleetLimiter];
    expect((await a.take('tpm:k', 60_000, 1_000, 0)).admitted).to.equal(true);
    await a.give('tpm:k', 60_000, 1_000 - 60_000); // the request used the whole minute
    expect((await b.take('tpm:k', 60_000, 1_000, 0)).admitted, 'b sees the debt before a takes again').to.equal(false);
  });

  it('pays a charge from the lease first, and hands usage under it back to the lease', async () => {
    const store = new FlakyStore();
    const [a] = processes(store, 1, 10_000) as [FleetLimiter];
    expect((await a.take('rpm:k', 60, 1, 0)).admitted).to.equal(true); // a holds 10 more
    const calls = store.calls;
    await a.give('rpm:k', 60, -4);
    await a.give('rpm:k', 60, 2);
    expect(store.calls, 'both within the lease').to.equal(calls);
    // The lease's 8 left, then the store's 49.
    expect(await drain([a], 'rpm:k', 60)).to.deep.equal([8 + 49]);
  });

  it('hands expired leases back on the flush and forgets them; and every lease on close', async () => {
    const shared = new MemoryLimitStore();
    const [a, b] = processes(shared, 2, 10_000) as [FleetLimiter, FleetLimiter];
    for (let i = 0; i < 100; i++) expect((await a.take(`rpm:quiet-${i}`, 60, 1, 0)).admitted).to.equal(true);
    expect((await a.take('rpm:k', 60, 1, 0)).admitted).to.equal(true); // a holds 10 more
    expect(await drain([b], 'rpm:k', 60)).to.deep.equal([49]);
    expect(a.leasesHeld).to.equal(101);
    now += 10_000;
    await a.flush();
    expect(a.leasesHeld, 'quiet keys leave nothing behind').to.equal(0);
    // 10 refilled, and a's 10 unused units back without a taking again.
    expect(await drain([b], 'rpm:k', 60)).to.deep.equal([20]);

    // A store that outlives the process closing (closing the in-memory one would empty it).
    const [c, d] = processes(new FlakyStore(), 2, 60_000) as [FleetLimiter, FleetLimiter];
    expect((await c.take('rpm:closing', 60, 1, 0)).admitted).to.equal(true); // c leases the whole minute
    expect(await drain([d], 'rpm:closing', 60)).to.deep.equal([0]);
    await c.close();
    expect(await drain([d], 'rpm:closing', 60)).to.deep.equal([59]);
  });

  it('starts no probe after close, when a take under way fails on the closed store', async () => {
    let fail: (err: Error) => void = () => undefined;
    const store = new FlakyStore();
    const hanging: LimitStore = Object.assign(Object.create(store) as FlakyStore, {
      take: () => new Promise<Grant>((_resolve, reject) => (fail = reject)),
    });
    const [a] = processes(hanging, 1, 0) as [FleetLimiter];
    const taking = a.take('rpm:k', 5, 1, 0);
    await new Promise<void>((resolve) => setImmediate(resolve));
    await a.close();
    fail(new Error('Cannot use a pool after calling end on the pool'));
    await taking;
    expect(a.shared, 'no outage after close').to.equal(true);
    expect(states).to.deep.equal([]);
    expect(logged).to.deep.equal([]);
  });
});
