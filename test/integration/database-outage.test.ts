import { expect } from 'chai';
import OpenAI from 'openai';
import { chatRoutes } from '../../simulator/chat';
import { createPool, type Database } from '../../src/db/database';
import { accountStream } from '../../src/domain/account/events';
import { createTestDatabase } from '../support/database';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { sample, scrapeMetrics } from '../support/metrics';
import { startTcpProxy, tcpTargetOf, throughProxy, type TcpProxy } from '../support/tcp-proxy';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';

/**
 * The database taken away in the middle of traffic (a TcpProxy between the gateway and its
 * PostgreSQL, cut and restored) and given back: every answer meanwhile is a 503 with Retry-After
 * in its endpoint's shape, never a 500; a call delivered meanwhile is charged once, from the
 * settlement journal; a task recorded before the database went away is answered with its id.
 */
describe('a database outage in the middle of traffic @integration', () => {
  let proxy: TcpProxy;
  let gw: TestGateway;
  let writerGate: string | null = null;

  before(async () => {
    const database = await createTestDatabase(20, { withSchema: true });
    proxy = await startTcpProxy(tcpTargetOf(database.url));
    const url = throughProxy(database.url, proxy);
    const pool = createPool(url, 20);
    const proxied: Database = {
      pool,
      url,
      async close() {
        await pool.end();
        await database.close();
      },
    };
    // The submit job takes up a task whose inline submission the outage cut off: soon, not after
    // the default 30 s. A job running when the database went away records its outcome once it is
    // back, without waiting out its lease (JOB_LEASE_MS, two minutes here as by default).
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000', SETTLEMENT_JOURNAL_RETRY_MS: '50', TASK_INLINE_SUBMIT_GRACE_MS: '500' }, { database: proxied });
    // The risk screening's writer is a chat call whose prompt the client does not write: it waits at the gate the test names.
    const chat = chatRoutes().find((r) => r.path === '/v1/chat/completions')!;
    gw.simulator.addRoutes([
      {
        ...chat,
        handler: (ctx) => {
          const body = ctx.body as { messages: { role: string; content: string }[] };
          const last = body.messages[body.messages.length - 1]!;
          if (!writerGate || last.content.includes('[sim:gate=')) return chat.handler(ctx);
          return chat.handler({ ...ctx, body: { ...body, messages: [...body.messages.slice(0, -1), { ...last, content: `${last.content}\n[sim:gate=${writerGate}]` }] } });
        },
      },
    ]);
  });
  after(async () => {
    proxy?.restore();
    await gw?.close();
    await proxy?.close();
  });

  async function gate(name: string, action: 'GET' | 'POST'): Promise<{ waiting: number }> {
    const res = await fetch(`${gw.simulator.url}/sim/gates/${name}${action === 'POST' ? '/open' : ''}`, { method: action });
    expect(res.status).to.equal(200);
    return (await res.json()) as { waiting: number };
  }

  async function accountEvents(accountId: string) {
    return gw.store.readStream(accountStream(accountId));
  }

  function expectUnavailable(res: { status: number; headers: Headers }, what: string): void {
    expect(res.status, what).to.equal(503);
    expect(res.headers.get('retry-after'), `${what}: Retry-After`).to.equal('2');
  }

  it('answers 503 with Retry-After in each shape meanwhile, charges every delivered call once and answers every recorded task', async () => {
    const { accountId, key } = await gw.fundedAccount(100_000_000);
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const name = `outage-${accountId}`;
    // Three calls reach their provider before the outage and wait there: two chats, and a video
    // whose task is recorded (the provider is asked inline, after the record).
    const streamed = (async () => {
      const stream = await client.chat.completions.create({
        model: 'chat-fast',
        messages: [{ role: 'user', content: `streamed through the outage [sim:tokens=12] [sim:gate=${name}]` }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | null | undefined = null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        usage = chunk.usage ?? usage;
      }
      return { text, usage };
    })();
    const plain = client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: `answered during the outage [sim:tokens=7] [sim:gate=${name}]` }] });
    const video = gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: `recorded before the outage [sim:gate=${name}]` }] });
    writerGate = `${name}-writer`;
    const risk = gw.api(key, 'POST', '/v1/agent/risk/chat/completions', { messages: [{ role: 'user', content: '青峦数据科技有限公司' }] });
    // The video's submit job joins its inline submission at the gate (TASK_INLINE_SUBMIT_GRACE_MS
    // later): a job running when the database goes away, whose outcome cannot be recorded.
    await waitFor('the chats, the video and its submit job at the provider', async () => (await gate(name, 'GET')).waiting === 4);
    await waitFor('the screening\'s writer at the provider', async () => (await gate(writerGate!, 'GET')).waiting === 1);
    await waitFor('their four reservations durable', async () => (await accountEvents(accountId)).filter((e) => e.type === 'FundsReserved').length === 4);

    proxy.cut();
    expectUnavailable(await gw.api(key, 'GET', '/v1/account'), 'the account (OpenAI shape)');
    const account = await gw.api(key, 'GET', '/v1/account');
    expect(account.body.error).to.deep.include({ type: 'service_unavailable', code: 'database_unavailable', param: null });
    const minutes = await gw.api(key, 'GET', '/v1/audio/minutes/min_00000000000000000000000000');
    expectUnavailable(minutes, 'a minutes task (shape B)');
    expect(Object.keys(minutes.body).sort()).to.deep.equal(['error', 'type']);
    expect(minutes.body.type).to.equal('service_unavailable');
    const report = await gw.api(key, 'GET', '/v1/agent/risk/reports/rpt_00000000000000000000000000');
    expectUnavailable(report, 'a risk report (shape A)');
    expect(report.body.error.code).to.equal('database_unavailable');
    expect(report.body.request_id).to.be.a('string');
    const refusedVideo = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'submitted during the outage' }] });
    expectUnavailable(refusedVideo, 'a video submitted meanwhile');
    const refusedChat = await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'sent during the outage' }] }).catch((err: unknown) => err);
    expect(refusedChat).to.be.instanceOf(OpenAI.APIError);
    expect((refusedChat as InstanceType<typeof OpenAI.APIError>).status).to.equal(503);

    // The provider answers while the database is still away.
    await gate(name, 'POST');
    await gate(writerGate, 'POST');
    const stream = await streamed;
    expect(stream.usage?.completion_tokens).to.equal(12);
    expect(stream.text.trim().split(/\s+/)).to.have.length(12);
    const answered = await plain;
    expect(answered.usage?.completion_tokens).to.equal(7);
    const created = await video;
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    expect(created.body).to.include({ status: 'queued' });
    expect(created.body.id).to.match(/^vid/);
    // The screening was done and is charged: its report is answered although it cannot be stored.
    const screened = await risk;
    expect(screened.status, JSON.stringify(screened.body)).to.equal(200);
    expect(screened.body.report.summary).to.be.a('string');
    await waitFor('the chat and screening settlements journaled', async () => gw.settlements.size === 3);
    expect(sample(await scrapeMetrics(gw.url), 'gateway_settlement_journal_entries'), 'the journal in /metrics').to.equal(3);

    proxy.restore();
    await waitFor('the journal settled', async () => gw.settlements.size === 0);
    expect(sample(await scrapeMetrics(gw.url), 'gateway_settlement_journal_entries')).to.equal(0);
    const task = await waitFor('the video task to finish', async () => {
      const res = await gw.api(key, 'GET', `/v1/videos/generations/${created.body.id}`);
      expect(res.status).to.be.oneOf([200, 503]);
      return res.status === 200 && res.body.status === 'succeeded' ? res.body : null;
    });
    expect(task.id).to.equal(created.body.id);
    await expectSettledAndAuditClean(gw, [key]);

    const events = await accountEvents(accountId);
    const reserved = events.filter((e) => e.type === 'FundsReserved').map((e) => (e.data as { reservationId: string }).reservationId);
    expect(reserved, 'the calls refused meanwhile reserved nothing').to.have.length(4);
    const closes = events.filter((e) => e.type === 'ReservationSettled' || e.type === 'ReservationReleased');
    expect(closes.map((e) => e.type), 'each reservation closed once, by a settlement').to.deep.equal(['ReservationSettled', 'ReservationSettled', 'ReservationSettled', 'ReservationSettled']);
    const screening = closes.map((e) => (e.data as { usage: { report_id?: string } }).usage).find((usage) => usage.report_id === screened.body.id);
    expect(screening, 'the screening charged once, by its report id').to.not.equal(undefined);
    expect((await gw.api(key, 'GET', `/v1/agent/risk/reports/${screened.body.id}`)).status, 'a report answered during the outage is not stored').to.equal(404);
    expect(new Set(closes.map((e) => (e.data as { reservationId: string }).reservationId))).to.deep.equal(new Set(reserved));
    const chats = closes.map((e) => (e.data as { usage: { model?: string; completion_tokens?: number } }).usage).filter((usage) => usage.model === 'chat-fast');
    expect(chats.map((usage) => usage.completion_tokens).sort((a, b) => a! - b!), 'the usage each chat delivered').to.deep.equal([7, 12]);
  });
});
