import { expect } from 'chai';
import { mountedSockets, mounted } from '../../simulator/providers/provider';
import { volcenginePodcastProvider } from '../../simulator/providers/volcengine-podcast';
import { createSimulator, type Simulator } from '../../simulator/server';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { countTokens } from '../../src/billing/tokens';
import type { Database } from '../../src/db/database';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { createTestDatabase } from '../support/database';
import { expectReservationClosedOnceAndAuditClean, RestartableGateway } from '../support/gateway-process';
import { podcastSessions } from '../support/simulated-podcasts';
import { testTempDir } from '../support/temp-dirs';
import { waitFor as waitWithin } from '../support/wait';

const ADMIN = 'podcast-restart-admin-token';
/** Restarts take their time: this suite waits up to 30 s, reading every 50 ms. */
const waitFor = <T>(what: string, probe: () => Promise<T | null | undefined | false>) => waitWithin(what, probe, 30_000, 50);

/**
 * The crash path of a podcast: the gateway process is killed (SIGKILL) while its poll job streams
 * a synthesis, and started again. The simulated provider is the test's own, so it outlives the
 * gateway; the first round waits at a gate after its first audio, so the kill lands mid-stream.
 */
describe('a podcast synthesis cut by a killed gateway @integration', function () {
  this.timeout(120_000);
  let db: Database;
  let simulator: Simulator;
  let simUrl = '';
  let gateway: RestartableGateway;
  let key = '';

  before(async () => {
    db = await createTestDatabase(20, { withSchema: true });
    simulator = createSimulator({ routes: mounted(volcenginePodcastProvider), sockets: mountedSockets(volcenginePodcastProvider) });
    simUrl = await simulator.listen(0);
    gateway = new RestartableGateway('podcast', {
      DATABASE_URL: db.url,
      DATA_DIR: testTempDir('podcast-restart-'),
      ADMIN_TOKEN: ADMIN,
      // Every channel the catalog names, on the simulator this test owns.
      CHANNELS: JSON.stringify(channelsServedBy(simUrl, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 5000, maxConcurrency: 16 })),
      TASK_POLL_MS: '50',
      // A killed worker's claim expires quickly, so the restarted process takes its poll job over.
      JOB_LEASE_MS: '1500',
      WEBHOOK_TIMEOUT_MS: '500',
      POLL_MIN_INTERVAL_MS_PODCAST: '0',
      SUBSCRIPTION_POLL_MS: '100',
    });
    await gateway.start();
    const account = await gateway.call(ADMIN, 'POST', '/admin/v1/accounts', { name: 'podcast restart' });
    await gateway.call(ADMIN, 'POST', `/admin/v1/accounts/${account.body.id}/credits`, { amount: 100_000_000, reference: 'podcast-restart-credit' });
    key = (await gateway.call(ADMIN, 'POST', `/admin/v1/accounts/${account.body.id}/keys`, {})).body.key;
  });

  // The gateway runs in a process of its own: a failure there shows only in its log.
  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.error(`the gateway's last lines:\n${gateway.lastLines(40).join('\n')}`);
  });

  after(async () => {
    await gateway?.stop();
    await simulator?.close();
    await db?.close();
  });

  it('makes the podcast again from its start after the restart, and settles it once, by the session that finished', async () => {
    const gate = `podcast-kill-${Date.now()}`;
    const text = `两位主持人聊聊潮汐 survives a kill [sim:duration=4] [sim:gate=${gate}]`;
    const created = await gateway.call(key, 'POST', '/v1/audio/podcasts', { model: 'podcast-standard', text });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    // The first round's first audio is out, its end waits at the gate: the synthesis is mid-stream.
    await waitFor('the synthesis mid-stream', async () => ((await (await fetch(`${simUrl}/sim/gates/${gate}`)).json()) as { waiting: number }).waiting === 1);
    await gateway.kill();
    await waitFor('the connection gone with the process', async () => (await podcastSessions(simUrl, text))[0]?.outcome === 'closed');
    await fetch(`${simUrl}/sim/gates/${gate}/open`, { method: 'POST' });
    await gateway.start();

    const task = await waitFor('the podcast final', async () => {
      const t = (await gateway.call(key, 'GET', `/v1/audio/podcasts/${created.body.id}`)).body;
      return t.status === 'processing' ? null : t;
    });
    expect(task.status, JSON.stringify(task)).to.equal('succeeded');
    const [killed, remade, ...more] = await podcastSessions(simUrl, text);
    expect(more).to.deep.equal([]);
    // Nothing of the killed run survived to resume from: the restarted run asks the provider afresh.
    expect([killed!.outcome, killed!.rounds]).to.deep.equal(['closed', []]);
    expect([remade!.outcome, remade!.retry_info, remade!.rounds]).to.deep.equal(['finished', null, [0, 1]]);
    expect(remade!.task_id).to.not.equal(killed!.task_id);
    // Both sessions reported the text's tokens; the task bills the finished one's usage, once.
    const tokens = countTokens(text.replace(/\[sim:[^\]]*\]/g, ' '));
    expect([killed!.usage.input_text_tokens, remade!.usage.input_text_tokens]).to.deep.equal([tokens, tokens]);
    expect(task.usage).to.deep.equal({ input_text_tokens: tokens, output_audio_tokens: 4 * 25 });
    expect(task.audio_duration).to.equal(4);
    const audio = Buffer.from(await (await fetch(task.audio_url)).arrayBuffer());
    expect([audio.subarray(0, 4).toString('ascii'), audio.readUInt32LE(40) / audio.readUInt32LE(28)]).to.deep.equal(['RIFF', 4]);
    await waitFor('billed', async () => (await gateway.call(key, 'GET', '/v1/account')).body.balance.frozen === 0);
    await expectReservationClosedOnceAndAuditClean(db, `podcast-${created.body.id}`, 'settled');
  });
});
