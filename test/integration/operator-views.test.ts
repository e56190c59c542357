import { expect } from 'chai';
import { MAX_WEBHOOK_ATTEMPTS } from '../../src/tasks/decider';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';
import { Receiver } from '../support/webhook-receiver';

/** The operator's views: dropped webhooks across accounts, accounts found by id. */
describe('operator views: dropped webhooks, account search @integration', () => {
  let gw: TestGateway;
  let receiver: Receiver;

  before(async () => {
    gw = await startTestGateway({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_DELAYS_MS: '30,30,30',
      TASK_POLL_MS: '20',
      RATE_LIMIT_PER_MINUTE: '100000',
    });
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver.close();
    await gw.close();
  });

  const video = (key: string, callback_url: string) =>
    gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a kite' }], callback_url });
  const dropped = (query = '') => gw.admin('GET', `/admin/v1/webhooks/dropped${query}`);

  it('lists dropped deliveries newest first with their task and attempts, by account, paged; delivered ones are not listed', async () => {
    const a = await gw.fundedAccount(1_000_000_000);
    const b = await gw.fundedAccount(1_000_000_000);
    receiver.script = [503];
    const first = (await video(a.key, receiver.url)).body.id as string;
    await waitFor('the first delivery dropped', async () => (await dropped(`?account_id=${a.accountId}`)).body.data.length === 1);
    const second = (await video(b.key, receiver.url)).body.id as string;
    await waitFor('the second delivery dropped', async () => (await dropped(`?account_id=${b.accountId}`)).body.data.length === 1);
    receiver.script = [200];
    const delivered = (await video(a.key, receiver.url)).body.id as string;
    await waitFor('the third delivered', async () => {
      const log = await gw.api(a.key, 'GET', `/v1/videos/generations/${delivered}/webhook/deliveries`);
      return log.body.data[0]?.status === 'delivered';
    });

    const both = (await dropped()).body;
    const ours = (both.data as any[]).filter((d) => [first, second].includes(d.task_id));
    expect(ours.map((d) => d.task_id)).to.deep.equal([second, first]);
    expect((both.data as any[]).map((d) => d.task_id)).to.not.include(delivered);
    const [latest] = ours;
    expect(latest).to.include({ object: 'webhook.delivery', status: 'dropped', reason: 'finished', kind: 'video', account_id: b.accountId, callback_url: receiver.url });
    expect(latest.attempts).to.have.length(MAX_WEBHOOK_ATTEMPTS);
    expect(latest.attempts.every((x: any) => x.ok === false && x.status_code === 503 && x.error === 'HTTP 503')).to.equal(true);

    const onlyA = (await dropped(`?account_id=${a.accountId}`)).body;
    expect(onlyA.data.map((d: any) => d.task_id)).to.deep.equal([first]);
    const page1 = (await dropped(`?account_id=${a.accountId}&limit=1`)).body;
    expect(page1).to.include({ has_more: false, next_after: null });

    // Paging across accounts: one at a time gives the same order as the whole list.
    const whole = (both.data as any[]).map((d) => d.id);
    const paged: string[] = [];
    for (let after: string | null = null; ; ) {
      const res = await dropped(`?limit=1${after ? `&after=${after}` : ''}`);
      expect(res.status).to.equal(200);
      paged.push(...res.body.data.map((d: any) => d.id));
      if (!res.body.has_more) break;
      after = res.body.next_after;
    }
    expect(paged).to.deep.equal(whole);
    await expectSettledAndAuditClean(gw, [a.key, b.key]);
  });

  it('refuses bad filters and cursors with 400 naming the parameter, and needs the admin token', async () => {
    for (const [query, param] of [['?after=nonsense', 'after'], [`?after=${Buffer.from('["a b","c"]').toString('base64url')}`, 'after'], ['?limit=500', 'limit'], ['?account_id=', 'account_id'], ['?kind=video', 'kind']]) {
      const res = await dropped(query);
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.error, query).to.include({ type: 'invalid_request_error', param });
    }
    const { key } = await gw.fundedAccount(0);
    for (const path of ['/admin/v1/webhooks/dropped', '/admin/v1/catalog']) {
      const res = await gw.api(key, 'GET', path);
      expect(res.status, path).to.equal(401);
      expect(res.body.error.code).to.equal('invalid_admin_token');
    }
  });

  it('finds an account by its whole id as well as by a part of its name', async () => {
    const opened = (await gw.admin('POST', '/admin/v1/accounts', { name: 'Lookup Ltd' })).body;
    await waitFor('the account listed', async () => (await gw.admin('GET', '/admin/v1/accounts?q=lookup')).body.data.some((x: any) => x.id === opened.id));
    const byId = await gw.admin('GET', `/admin/v1/accounts?q=${opened.id}`);
    expect(byId.status).to.equal(200);
    expect(byId.body.data.map((x: any) => x.id)).to.deep.equal([opened.id]);
    // A part of an id is not an id: only names match partially.
    expect((await gw.admin('GET', `/admin/v1/accounts?q=${opened.id.slice(0, -2)}`)).body.data).to.deep.equal([]);
  });

  it('shows the catalog with every model marked available when every channel is configured', async () => {
    const res = await gw.admin('GET', '/admin/v1/catalog');
    expect(res.status).to.equal(200);
    const ids = res.body.data.map((m: any) => m.id);
    expect(ids).to.deep.equal([...ids].sort());
    expect(ids).to.include('chat-fast');
    expect(res.body.data.every((m: any) => m.available === true)).to.equal(true);
    const { key } = await gw.fundedAccount(0);
    const sold = (await gw.api(key, 'GET', '/v1/models')).body.data.map((m: any) => m.id).sort();
    expect(sold).to.deep.equal([...ids].sort());
  });
});
