import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { channelsServedBy } from '../../src/upstreams/registry';
import { createSimulator, type Simulator } from '../../simulator/server';
import { arkProvider } from '../../simulator/providers/ark';
import { mounted } from '../../simulator/providers/provider';
import { JOB } from '../../src/tasks/process-manager';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';
import { ALL_MODEL_TYPES } from '../../src/model-types';

/**
 * How the task engine polls a provider task, seen from the provider's side: a simulator this test
 * owns records every GET of a task. The poll job backs off (TASK_POLL_MS, doubled per earlier
 * poll), and a poll that finds the upstream as it was records nothing in the task's stream.
 *
 * Timing on a shared machine only ever makes a wait longer, so the spacing is checked by lower
 * bounds (each gap at least the backoff due at that poll) and the count of polls by an upper one.
 */
describe('task polling backs off and records only changes @integration', function () {
  this.timeout(60_000);
  const POLL_MS = 20;
  /** The simulated task takes this long; it reports `queued` for its first fifth, then `running`. */
  const TASK_MS = 4_000;
  /** The video kind's backoff: the delay after the n-th poll (README: TASK_POLL_MS doubling). */
  const backoff = (n: number) => Math.min(POLL_MS * 2 ** Math.min(n, 6), 15_000);

  let simulator: Simulator;
  let gw: TestGateway;
  let key: string;
  /** Arrival times (ms, monotonic) of the simulator's GETs, by request path. */
  const gets = new Map<string, number[]>();
  let task: { id: string; upstream_id: string };
  let pollGets: number[] = [];
  /** The highest `polls` count seen in the task's poll job while it ran. */
  let highestPollsOnRecord = 0;

  before(async () => {
    simulator = createSimulator({ routes: mounted(arkProvider) });
    const simUrl = await simulator.listen(0);
    simulator.server.on('request', (req) => {
      if (req.method !== 'GET') return;
      const path = (req.url ?? '').split('?')[0]!;
      gets.set(path, [...(gets.get(path) ?? []), performance.now()]);
    });
    gw = await startTestGateway({
      CHANNELS: JSON.stringify(channelsServedBy(simUrl, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 10_000, maxConcurrency: 16 })),
      TASK_POLL_MS: String(POLL_MS),
    });
    ({ key } = await gw.fundedAccount(1_000_000_000));

    const created = await gw.api(key, 'POST', '/v1/videos/generations', {
      model: 'video-ref-2.0',
      content: [{ type: 'text', text: `a slow sunrise [sim:delay=${TASK_MS}]` }],
      duration: 4,
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    expect(created.body.upstream_id, 'the provider took the task during the request').to.be.a('string');
    task = created.body;
    const stream = `video-${task.id}`;
    await waitFor(
      'the task to be billed',
      async () => {
        const { rows } = await gw.pool.query<{ polls: string | null }>(`SELECT payload->>'polls' AS polls FROM jobs WHERE kind = $1 AND key = $2`, [JOB.poll, stream]);
        highestPollsOnRecord = Math.max(highestPollsOnRecord, Number(rows[0]?.polls ?? 0));
        return (await gw.api(key, 'GET', `/v1/videos/generations/${task.id}`)).body.billing.status !== 'reserved';
      },
      30_000,
      50,
    );
    // The poll job is gone once its last run finished: no later poll can come.
    await waitFor('the poll job done', async () => (await gw.pool.query('SELECT 1 FROM jobs WHERE kind = $1 AND key = $2', [JOB.poll, stream])).rowCount === 0);
    pollGets = gets.get(`/ark/api/v3/contents/generations/tasks/${task.upstream_id}`) ?? [];
  });

  after(async () => {
    await gw?.close();
    await simulator?.close();
  });

  it('polls one task with growing gaps: each at least TASK_POLL_MS doubled per earlier poll', () => {
    // About 9 polls over the task's 4 s (20, 40, 80, ... 1280 ms apart); a fixed 40 ms interval would make ~100.
    expect(pollGets.length, 'polls of the task').to.be.within(5, 14);
    const gaps = pollGets.slice(1).map((t, i) => t - pollGets[i]!);
    gaps.forEach((gap, i) => {
      expect(gap, `gap after poll ${i + 1} of ${gaps.map(Math.round).join(', ')} ms`).to.be.at.least(backoff(i + 1) * 0.9);
    });
    const last = gaps[gaps.length - 1]!;
    expect(last, 'the last gap against the first').to.be.at.least(4 * backoff(1));
    expect(highestPollsOnRecord, 'the poll count stored in the job between polls').to.be.at.least(3);
  });

  it('records a TaskProgressed only when the upstream status changes, however often it was polled', async () => {
    const events = await gw.store.readStream(`video-${task.id}`);
    const progressed = events.filter((e) => e.type === 'TaskProgressed').map((e) => (e.data as { upstreamStatus: string }).upstreamStatus);
    const pendingPolls = pollGets.length - 1; // the last poll found the task succeeded
    expect(pendingPolls, 'polls that found the task queued or running').to.be.at.least(4);
    // The simulator says `queued`, then `running`: at most one event for each, never a repeat.
    expect(progressed.length, `TaskProgressed ${progressed.join(', ')} over ${pendingPolls} polls`).to.be.within(1, 2);
    progressed.slice(1).forEach((status, i) => expect(status).to.not.equal(progressed[i]));
    expect(progressed[progressed.length - 1]).to.equal('running');
    expect(events.map((e) => e.type)).to.include.members(['TaskUpstreamSucceeded', 'TaskSucceeded', 'TaskBilled']);
  });

  it('settles the task once by its usage and leaves the ledger audit-clean', async () => {
    const body = (await gw.api(key, 'GET', `/v1/videos/generations/${task.id}`)).body;
    expect(body.status).to.equal('succeeded');
    expect(body.billing).to.deep.include({ status: 'settled', amount: body.billing.reserved });
    await expectSettledAndAuditClean(gw, [key]);
  });
});
