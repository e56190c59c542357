import { units } from '../support/pricing';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { allProjections } from '../../projections';
import { AUDIT_REPLAY_SCHEMA, runAudit } from '../../src/audit/audit';
import { READ_MODEL_SCHEMA, type Projection } from '../../src/projections-runtime/consumer';
import { ensureProjectionTables } from '../../src/projections-runtime/tables';
import { rebuildProjections } from '../../src/projections-runtime/rebuild';
import type { EventStore, GlobalPosition } from '../../src/eventstore/port';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/wait';
import { Reconciler } from '../../src/processes/reconciler';
import { createLogger } from '../../src/log';

const run = promisify(execFile);

describe('reconciler, audit and rebuild @integration', () => {
  let gw: TestGateway;
  let now = new Date();
  before(async () => {
    gw = await startTestGateway({ ORPHAN_RESERVATION_GRACE_MS: '60000' }, { clock: () => now });
  });
  after(async () => gw.close());

  it('releases a task reservation whose task was never recorded (a crash between the two appends)', async () => {
    const { accountId, key } = await gw.fundedAccount(1000);
    // The flow is killed after reserving: the task stream the reservation names never appears.
    const orphan = await gw.accounts.reserve({ accountId, amount: 400, purpose: { kind: 'task', ref: 'video-never-recorded', description: 'video', actor: 'system', model: 'video', endpoint: 'test' }, ttlMs: 3_600_000 });
    // A reservation whose task exists belongs to that task: left alone.
    await gw.store.append('video-recorded', [{ type: 'TestTaskSubmitted', data: {} }], { expectedVersion: 'no_stream' });
    const owned = await gw.accounts.reserve({ accountId, amount: 100, purpose: { kind: 'task', ref: 'video-recorded', description: 'video', actor: 'system', model: 'video', endpoint: 'test' }, ttlMs: 3_600_000 });
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance).to.deep.equal({ available: 500, frozen: 500, currency: 'CNY' });

    expect(await gw.accounts.awaitLedger(accountId), 'the ledger views caught up').to.equal(true);
    expect(await gw.reconciler.runOnce(), 'within the grace period nothing is released').to.equal(0);
    now = new Date(now.getTime() + 61_000);
    expect(await gw.reconciler.runOnce()).to.equal(1);
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance).to.deep.equal({ available: 900, frozen: 100, currency: 'CNY' });
    expect(await gw.accounts.awaitLedger(accountId), 'the ledger views caught up').to.equal(true);
    const { rows } = await gw.pool.query('SELECT reservation_id, status, close_reason FROM rm.reservations WHERE account_id = $1 ORDER BY reservation_id', [accountId]);
    expect(rows).to.deep.equal([
      { reservation_id: orphan, status: 'released', close_reason: 'orphaned: the task was never recorded' },
      { reservation_id: owned, status: 'open', close_reason: null },
    ]);
    // The audit lists a reservation open longer than its threshold (without failing on it).
    const audit = await runAudit(gw.pool, gw.store, allProjections, { staleAfterMs: 0 });
    expect(audit.staleReservations.filter((r) => r.account_id === accountId).map((r) => [r.reservation_id, r.amount])).to.deep.equal([[owned, 100]]);
    expect(audit.ok).to.equal(true);
    await gw.accounts.release(accountId, owned, 'test done');
    expect(await gw.accounts.awaitLedger(accountId), 'the ledger views caught up').to.equal(true);
    const afterRelease = await runAudit(gw.pool, gw.store, allProjections, { staleAfterMs: 0 });
    expect(afterRelease.staleReservations.filter((r) => r.account_id === accountId)).to.deep.equal([]);
    await gw.expectAuditClean();
  });

  it('releases a request reservation that was never settled once it expired and the settlement journal\'s horizon passed', async () => {
    const { accountId } = await gw.fundedAccount(1000);
    await gw.accounts.reserve({ accountId, amount: 250, purpose: { kind: 'request', ref: 'req_dead', description: 'chat', actor: 'system', model: 'chat', endpoint: 'test' }, ttlMs: 10_000 });
    expect(await gw.accounts.awaitLedger(accountId), 'the ledger views caught up').to.equal(true);
    now = new Date(now.getTime() + 11_000);
    // Expired, but its process may hold its settlement in a journal (SETTLEMENT_JOURNAL_HORIZON_MS, an hour by default).
    expect(await gw.reconciler.runOnce(), 'within the horizon nothing is released').to.equal(0);
    expect((await gw.accounts.get(accountId))!.balance).to.deep.equal({ available: 750, frozen: 250, currency: 'CNY' });
    now = new Date(now.getTime() + 3_600_000);
    expect(await gw.reconciler.runOnce()).to.equal(1);
    expect((await gw.accounts.get(accountId))!.balance).to.deep.equal({ available: 1000, frozen: 0, currency: 'CNY' });
    await gw.expectAuditClean();
  });

  it('catches a tampered read model, in the library and through `npm run audit` (non-zero exit)', async function () {
    this.timeout(120_000);
    const { accountId } = await gw.fundedAccount(777);
    await gw.expectAuditClean();
    const env = { ...process.env, DATABASE_URL: (gw as unknown as { database: { url: string } }).database.url, LOG_LEVEL: 'silent' };
    const clean = await run('npm', ['run', '-s', 'audit'], { env });
    expect(JSON.parse(clean.stdout).ok).to.equal(true);

    await gw.pool.query(`UPDATE ${READ_MODEL_SCHEMA}.balances SET available = available + 1 WHERE account_id = $1`, [accountId]);
    const report = await runAudit(gw.pool, gw.store, allProjections, { staleAfterMs: 3_600_000 });
    expect(report.ok).to.equal(false);
    expect(report.mismatches).to.deep.equal(['balances: 2 row(s) of balances differ from a replay of the log']);
    let exitCode = 0;
    let stdout = '';
    try {
      await run('npm', ['run', '-s', 'audit'], { env });
    } catch (err) {
      exitCode = (err as { code: number }).code;
      stdout = (err as { stdout: string }).stdout;
    }
    expect(exitCode).to.equal(1);
    expect(JSON.parse(stdout).mismatches).to.have.length(1);

    // A rebuild from the log repairs it and gives the same balances as before the tampering.
    await rebuildProjections(gw.pool, gw.store, allProjections, READ_MODEL_SCHEMA, gw.logger);
    expect((await gw.accounts.get(accountId))!.balance.available).to.equal(777);
    await gw.expectAuditClean();
  });

  it('runs two audits at once to the same clean report, replaying into tables it leaves empty', async () => {
    const { key } = await gw.fundedAccount(1_000_000);
    expect((await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi [sim:tokens=3]' }] })).status).to.equal(200);
    const [first, second] = await Promise.all([
      runAudit(gw.pool, gw.store, allProjections, { staleAfterMs: 3_600_000 }),
      runAudit(gw.pool, gw.store, allProjections, { staleAfterMs: 3_600_000 }),
    ]);
    for (const report of [first, second]) {
      expect(report.mismatches).to.deep.equal([]);
      expect(report.invariantViolations).to.deep.equal([]);
    }
    expect(second.eventsInLog).to.be.greaterThan(0);
    for (const projection of allProjections) {
      for (const table of projection.tables) {
        const { rows } = await gw.pool.query(`SELECT count(*)::int AS n FROM ${AUDIT_REPLAY_SCHEMA}.${table}`);
        expect(rows[0].n, `${AUDIT_REPLAY_SCHEMA}.${table}`).to.equal(0);
      }
    }
  });

  /** A projection of its own (one table in a scratch schema) for `body`, removed afterwards. */
  async function withScratchProjection(name: string, apply: () => Promise<void>, body: (projection: Projection, schema: string) => Promise<void>): Promise<void> {
    const projection: Projection = { name, tables: ['scratch'], ddl: 'CREATE TABLE scratch (id int);', eventTypes: new Set(['AccountOpened']), apply };
    const schema = name.replace(/-/g, '_');
    await ensureProjectionTables(gw.pool, [projection], schema);
    try {
      await body(projection, schema);
    } finally {
      await gw.pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await gw.pool.query('DELETE FROM consumer_checkpoints WHERE name = $1', [name]);
    }
  }

  it('fails a rebuild whose projection throws, instead of waiting for another instance to replay it', async () => {
    await gw.fundedAccount(1);
    const failing = async () => {
      throw new Error('the fold failed');
    };
    await withScratchProjection('rebuild-failure-test', failing, async (projection, schema) => {
      const failure = await rebuildProjections(gw.pool, gw.store, [projection], schema, gw.logger).then(() => null, (err: unknown) => err);
      expect(String(failure)).to.include('the fold failed');
    });
  });

  it('fails a rebuild whose read ahead of the log fails while a page is folded, with that error, not an unhandled rejection', async () => {
    await gw.fundedAccount(1);
    let releaseFold!: () => void;
    const folding = new Promise<void>((resolve) => (releaseFold = resolve));
    // The first read answers; the next, the read ahead while the first page is folded, fails.
    let reads = 0;
    const store: EventStore = Object.assign(Object.create(gw.store) as EventStore, {
      readAll: (from: GlobalPosition | null, limit: number) => (++reads === 1 ? gw.store.readAll(from, limit) : Promise.reject(new Error('the log read failed'))),
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      await withScratchProjection('rebuild-read-failure-test', () => folding, async (projection, schema) => {
        const rebuilt = rebuildProjections(gw.pool, store, [projection], schema, gw.logger).then(() => null, (err: unknown) => err);
        await waitFor('the read ahead', async () => reads >= 2);
        // A rejection nobody handles is reported once the microtasks of a turn have run.
        await new Promise((resolve) => setImmediate(resolve));
        releaseFold();
        expect(String(await rebuilt)).to.include('the log read failed');
        expect(unhandled).to.deep.equal([]);
      });
    } finally {
      releaseFold();
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('rebuilds every read model to identical rows through `npm run projections:rebuild`', async function () {
    this.timeout(120_000);
    const { accountId } = await gw.fundedAccount(5000);
    const r = await gw.accounts.reserve({ accountId, amount: 300, purpose: { kind: 'request', ref: 'x', description: 'chat', actor: 'system', model: 'chat', endpoint: 'test' }, ttlMs: 60_000 });
    await gw.accounts.settle(accountId, r, units(123), { tokens: 3 });
    expect(await gw.accounts.awaitLedger(accountId), 'the ledger views caught up').to.equal(true);
    const snapshot = async () => {
      const out: Record<string, unknown[]> = {};
      for (const p of allProjections) for (const t of p.tables) out[t] = (await gw.pool.query(`SELECT * FROM ${READ_MODEL_SCHEMA}.${t} ORDER BY 1, 2`)).rows;
      return out;
    };
    // Every read model at the head first: the ledger alone being there says nothing of the others.
    const atHead = async () => expect(await gw.progress.waitForCommitted(allProjections.map((p) => p.name), 60_000), 'every read model at what was committed').to.equal(true);
    await atHead();
    const before = await snapshot();
    const env = { ...process.env, DATABASE_URL: (gw as unknown as { database: { url: string } }).database.url, LOG_LEVEL: 'silent' };
    const out = await run('npm', ['run', '-s', 'projections:rebuild'], { env });
    expect(out.stdout).to.include(`rebuilt ${allProjections.map((p) => p.name).join(', ')}`);
    // The live gateway replays too (it sees its checkpoints reset); wait until it is at the head.
    await atHead();
    expect(await snapshot()).to.deep.equal(before);
    await gw.expectAuditClean();
  });

  it('shows the lag of each consumer to the operator, and nothing behind once caught up', async () => {
    await gw.fundedAccount(5);
    const head = (await gw.store.headPosition())!;
    await gw.progress.waitFor(head, [...gw.runners.keys()], 10_000);
    const res = await gw.admin('GET', '/admin/v1/consumers');
    expect(res.status).to.equal(200);
    const names = res.body.consumers.map((c: { name: string }) => c.name);
    expect(names).to.include.members(allProjections.map((p) => p.name));
    expect(names).to.include('task-process-manager');
    for (const c of res.body.consumers.filter((x: { name: string }) => gw.runners.has(x.name))) {
      expect(c, c.name).to.deep.include({ behind: 0, behind_capped: false, active_here: true });
    }
    expect((await gw.api(null, 'GET', '/admin/v1/consumers')).status).to.equal(401);
  });

  it('lists failing jobs for the operator', async () => {
    // A job of a kind no worker handles stays due; one marked as failed shows with its error.
    await gw.pool.query(
      `INSERT INTO jobs (kind, key, payload, due_at, attempts, last_error) VALUES
         ('test.unhandled', 'ok-1', '{}', now(), 0, NULL), ('test.unhandled', 'broken-1', '{}', now(), 3, 'upstream said no')`,
    );
    const all = await gw.admin('GET', '/admin/v1/jobs');
    expect(all.body.data.filter((j: { kind: string }) => j.kind === 'test.unhandled').map((j: { key: string }) => j.key).sort()).to.deep.equal(['broken-1', 'ok-1']);
    const failing = await gw.admin('GET', '/admin/v1/jobs?failing=true');
    expect(failing.body.data).to.have.length(1);
    expect(failing.body.data[0]).to.deep.include({ kind: 'test.unhandled', key: 'broken-1', attempts: 3, last_error: 'upstream said no' });
    await gw.pool.query("DELETE FROM jobs WHERE kind = 'test.unhandled'");
  });
});


describe('reconciler: dead reservations behind a page of live task reservations @integration', () => {
  let gw: TestGateway;
  const now = new Date();
  before(async () => {
    // The gateway's own pass never comes during the test: the reconciler the test makes is the only one running.
    gw = await startTestGateway({ ORPHAN_RESERVATION_GRACE_MS: '60000', RECONCILE_INTERVAL_MS: '3600000' }, { clock: () => now });
  });
  after(async () => gw.close());

  it('reads every page of candidates, so live tasks that fill a page hide no dead reservation', async () => {
    const { accountId } = await gw.fundedAccount(10_000);
    const purpose = (kind: 'task' | 'request', ref: string) => ({ kind, ref, description: 'test', actor: 'system', model: 'video', endpoint: 'test' });
    // Three reservations of recorded tasks sort first (ids in that order): more than a page of two.
    for (const n of [1, 2, 3]) {
      await gw.store.append(`video-live-${n}`, [{ type: 'TestTaskSubmitted', data: {} }], { expectedVersion: 'no_stream' });
      await gw.accounts.reserve({ accountId, amount: 100, purpose: purpose('task', `video-live-${n}`), ttlMs: 3_600_000, reservationId: `rsv_page_${n}` });
    }
    await gw.accounts.reserve({ accountId, amount: 400, purpose: purpose('task', 'video-never-recorded'), ttlMs: 3_600_000, reservationId: 'rsv_page_4' });
    await gw.accounts.reserve({ accountId, amount: 250, purpose: purpose('request', 'req_dead'), ttlMs: 10_000, reservationId: 'rsv_page_5' });
    expect(await gw.accounts.awaitLedger(accountId), 'the ledger views caught up').to.equal(true);

    const later = new Date(now.getTime() + 61_000);
    const reconciler = new Reconciler(gw.pool, gw.store, gw.accounts, createLogger('silent'), { intervalMs: 3_600_000, orphanGraceMs: 60_000, settlementHorizonMs: 0, clock: () => later, pageSize: 2 });
    expect(await reconciler.runOnce()).to.equal(2);
    expect(await gw.accounts.awaitLedger(accountId), 'the ledger views caught up').to.equal(true);
    const { rows } = await gw.pool.query('SELECT reservation_id, status FROM rm.reservations WHERE account_id = $1 ORDER BY reservation_id', [accountId]);
    expect(rows.map((r: { reservation_id: string; status: string }) => `${r.reservation_id} ${r.status}`)).to.deep.equal([
      'rsv_page_1 open',
      'rsv_page_2 open',
      'rsv_page_3 open',
      'rsv_page_4 released',
      'rsv_page_5 released',
    ]);
    expect((await gw.accounts.get(accountId))!.balance).to.deep.equal({ available: 9_700, frozen: 300, currency: 'CNY' });
    expect(await reconciler.runOnce(), 'a second pass finds nothing more').to.equal(0);
    for (const n of [1, 2, 3]) await gw.accounts.release(accountId, `rsv_page_${n}`, 'test done');
    await gw.expectAuditClean();
  });
});
