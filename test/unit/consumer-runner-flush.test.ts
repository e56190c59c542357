import { expect } from 'chai';
import type { Pool } from 'pg';
import type { EventStore, GlobalPosition, RecordedEvent, SubscribeOptions } from '../../src/eventstore/port';
import { createLogger } from '../../src/log';
import { CheckpointMoved, type CheckpointCommitter, type CommitRequest } from '../../src/projections-runtime/checkpoint-commit';
import type { EventConsumer } from '../../src/projections-runtime/consumer';
import type { LeaseHolder } from '../../src/projections-runtime/leases';
import { ConsumerRunner } from '../../src/projections-runtime/runner';
import { waitFor } from '../support/wait';

/**
 * A runner's checkpoint flushes against a store and a committer the test drives: it hands over
 * each batch itself and settles each commit when it chooses, so the order of events is the
 * test's, not the machine's. The flush delay is far beyond the test (its timer never fires); the
 * runner's clock is the test's.
 */
function harness() {
  const subscriptions: { readonly onBatch: SubscribeOptions['onBatch']; closed: boolean; fail: (err: unknown) => void }[] = [];
  const store = {
    subscribe(options: SubscribeOptions) {
      let end!: () => void;
      let fail!: (err: unknown) => void;
      const done = new Promise<void>((resolve, reject) => {
        end = resolve;
        fail = reject;
      });
      // `fail` ends the subscription as a lost database connection ends a real one.
      const subscription = { onBatch: options.onBatch, closed: false, fail };
      subscriptions.push(subscription);
      return {
        done,
        close: async () => {
          subscription.closed = true;
          end();
        },
      };
    },
  };
  const commits: { readonly request: CommitRequest; resolve: () => void; reject: (err: unknown) => void }[] = [];
  /** Once set, the commit waiting and every later one fail with it. */
  let failure: unknown = null;
  const committer: CheckpointCommitter = {
    commit: (request) =>
      new Promise<void>((resolve, reject) => {
        commits.push({ request, resolve, reject });
        if (failure !== null) reject(failure);
      }),
    openCheckpoint: async () => null,
  };
  const rejectAll = (err: unknown): void => {
    failure = err;
    for (const commit of commits) commit.reject(err);
  };
  const consumer: EventConsumer = { name: 'flushing', eventTypes: new Set(['Mine']), apply: async () => undefined };
  const clock = { now: 0 };
  const flushMs = 1_000_000;
  const runner = new ConsumerRunner(null as unknown as Pool, store as unknown as EventStore, consumer, createLogger('silent'), 'public', {
    committer,
    checkpointFlushMs: flushMs,
    now: () => clock.now,
    // A restart after a failure waits beyond the test: one that happens came from a cause that restarts at once.
    restartDelayMs: 1_000_000,
  });
  const leases = { want: (_name: string, onChange: (held: boolean) => void) => onChange(true) } as unknown as LeaseHolder;
  let minor = 0n;
  /** Hands a batch of one foreign event to the live subscription, `advanceMs` after the last. */
  const deliverForeign = async (advanceMs: number): Promise<GlobalPosition> => {
    clock.now += advanceMs;
    const position = { major: 1n, minor: ++minor };
    const live = subscriptions.filter((s) => !s.closed);
    expect(live, 'live subscriptions').to.have.length(1);
    const event: RecordedEvent = { id: `e${minor}`, streamId: 'elsewhere', revision: Number(minor), type: 'Foreign', data: {}, metadata: {}, position, recordedAt: new Date(0) };
    await live[0]!.onBatch([event]);
    return position;
  };
  const due = flushMs / 4;
  /** Starts the runner and lets its checkpoint trail until a batch asks for a flush; the position that flush stores. */
  const untilFirstFlush = async (): Promise<GlobalPosition> => {
    runner.start(leases);
    await waitFor('subscribed', async () => subscriptions.length === 1);
    await deliverForeign(0);
    const flushed = await deliverForeign(due);
    await waitFor('the flush asked for', async () => commits.length === 1);
    return flushed;
  };
  return { runner, subscriptions, commits, rejectAll, deliverForeign, due, untilFirstFlush };
}

/** Lets every callback already due run: the microtasks, then one turn of timers and I/O. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('a consumer runner storing a checkpoint that trails foreign events', () => {
  it('runs one flush at a time; the position reached meanwhile is stored by the next batch that asks', async () => {
    const h = harness();
    try {
      const first = await h.untilFirstFlush();
      expect(h.commits[0]!.request.last).to.deep.equal(first);
      await h.deliverForeign(h.due);
      await h.deliverForeign(h.due);
      const stored = new Promise((resolve) => h.runner.once('advanced', resolve));
      h.commits[0]!.resolve();
      await stored;
      await turn();
      // The two batches during the flush queued no flush of their own (each would have been a
      // commit of its own, outside any group); the next batch's flush takes their position along.
      expect(h.commits).to.have.length(1);
      const fourth = await h.deliverForeign(h.due);
      await waitFor('the next flush asked for', async () => h.commits.length === 2);
      expect(h.commits[1]!.request.expected).to.deep.equal(first);
      expect(h.commits[1]!.request.last).to.deep.equal(fourth);
      h.commits[1]!.resolve();
    } finally {
      await h.runner.stop();
    }
  });

  it('restarts once when its flush finds the checkpoint moved, leaving one subscription', async () => {
    const h = harness();
    try {
      await h.untilFirstFlush();
      await h.deliverForeign(h.due);
      await h.deliverForeign(h.due);
      // A rebuild reset the row: every flush finds it moved from now on.
      h.rejectAll(new CheckpointMoved());
      await waitFor('subscribed again', async () => h.subscriptions.length >= 2);
      // Restarts wait for a timer of no delay; any other would have been set before this one.
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(h.subscriptions.map((s) => s.closed)).to.deep.equal([true, false]);
    } finally {
      await h.runner.stop();
    }
    expect(h.subscriptions.every((s) => s.closed)).to.equal(true);
  });

  it('absorbs a second cause while a restart waits, so that the two cannot both subscribe', async () => {
    const h = harness();
    try {
      await h.untilFirstFlush();
      // The subscription fails (the database went away): a restart after the backoff, beyond the test.
      h.subscriptions[0]!.fail(new Error('connection lost'));
      await turn();
      // Meanwhile the flush under way finds the checkpoint moved, a cause that restarts at once.
      h.commits[0]!.reject(new CheckpointMoved());
      await turn();
      // A restart of its own (a timer of no delay, set before this one) would have subscribed by
      // now, and the waiting one would have subscribed a second time after the backoff.
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(h.subscriptions).to.have.length(1);
    } finally {
      // Stopping stores the position the failed flush left behind: let that commit fail at once.
      h.rejectAll(new Error('the test is over'));
      await h.runner.stop();
    }
  });

  it('stops only after a flush under way has ended', async () => {
    const h = harness();
    const last = await h.untilFirstFlush();
    let stopped = false;
    const stopping = h.runner.stop().then(() => void (stopped = true));
    await turn();
    expect(stopped, 'stopped while its flush ran').to.equal(false);
    h.commits[0]!.resolve();
    await stopping;
    expect(h.commits.map((c) => c.request.last)).to.deep.equal([last]);
  });
});
