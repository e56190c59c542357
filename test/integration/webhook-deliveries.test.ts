import { expect } from 'chai';
import { MAX_WEBHOOK_ATTEMPTS } from '../../src/tasks/decider';
import { verifyWebhook } from '../../src/webhooks/signing';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';
import { Receiver } from '../support/webhook-receiver';

/** GET /v1/videos/generations/{id}/webhook/deliveries: the delivery log with every attempt and its signature headers. */
describe('webhook deliveries of a video task @integration', () => {
  let gw: TestGateway;
  let key: string;
  let receiver: Receiver;

  before(async () => {
    gw = await startTestGateway({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_DELAYS_MS: '50,50,50',
      WEBHOOK_TIMEOUT_MS: '2000',
      TASK_POLL_MS: '20',
      RATE_LIMIT_PER_MINUTE: '100000',
    });
    ({ key } = await gw.fundedAccount(1_000_000_000));
  });
  beforeEach(async () => {
    receiver = await new Receiver().start();
  });
  afterEach(async () => {
    await receiver.close();
    await expectSettledAndAuditClean(gw, [key]);
  });
  after(async () => gw.close());

  const video = (body: Record<string, unknown>, k = key) =>
    gw.api(k, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a kite over the sea' }], ...body });
  const deliveries = (id: string, query = '', k = key) => gw.api(k, 'GET', `/v1/videos/generations/${id}/webhook/deliveries${query}`);
  const settledDeliveries = (id: string, count: number, k = key) =>
    waitFor(`${count} finished deliveries of ${id}`, async () => {
      const res = await deliveries(id, '', k);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.data.length === count && res.body.data.every((d: any) => d.status !== 'pending') ? res.body : null;
    });

  it('shows each attempt with its time, status, outcome and the signature headers the receiver got; newest delivery first, paged', async () => {
    const secret = (await gw.api(key, 'POST', '/v1/account/webhook-secret')).body.secret as string;
    receiver.script = [500, 200];
    const task = await video({ callback_url: receiver.url });
    expect(task.status).to.equal(200);
    const first = await settledDeliveries(task.body.id, 1);
    expect(first).to.include({ object: 'list', has_more: false, next_after: null, callback_url: receiver.url, signed: true });
    const [delivery] = first.data;
    expect(delivery).to.include({ object: 'webhook.delivery', reason: 'finished', status: 'delivered' });
    expect(Date.parse(delivery.requested_at)).to.not.be.NaN;
    expect(delivery.attempts).to.have.length(2);
    expect(receiver.received).to.have.length(2);
    delivery.attempts.forEach((attempt: any, i: number) => {
      const got = receiver.received[i]!;
      expect(attempt).to.include({ attempt: i + 1, ok: i === 1, status_code: i === 0 ? 500 : 200, error: i === 0 ? 'HTTP 500' : null });
      expect(attempt.duration_ms).to.be.a('number').and.at.least(0);
      expect(Date.parse(attempt.at)).to.not.be.NaN;
      expect(String(attempt.timestamp)).to.equal(got.headers['x-service-timestamp']);
      expect(attempt.signature).to.equal(got.headers['x-service-signature']);
      expect(verifyWebhook(secret, String(attempt.timestamp), got.body, attempt.signature, attempt.timestamp)).to.equal(true);
    });

    const again = await gw.api(key, 'POST', `/v1/videos/generations/${task.body.id}/webhook/redeliver`);
    expect(again.status).to.equal(202);
    const both = await settledDeliveries(task.body.id, 2);
    expect(both.data.map((d: any) => [d.id, d.reason])).to.deep.equal([
      [again.body.delivery_id, 'redeliver'],
      [delivery.id, 'finished'],
    ]);
    const page1 = await deliveries(task.body.id, '?limit=1');
    expect(page1.body).to.include({ has_more: true, next_after: again.body.delivery_id });
    expect(page1.body.data.map((d: any) => d.id)).to.deep.equal([again.body.delivery_id]);
    const page2 = await deliveries(task.body.id, `?limit=1&after=${page1.body.next_after}`);
    expect(page2.body).to.include({ has_more: false, next_after: null });
    expect(page2.body.data.map((d: any) => d.id)).to.deep.equal([delivery.id]);
  });

  it('records a dropped delivery with every failed attempt, and unsigned attempts with a null signature', async () => {
    const { key: unsigned } = await gw.fundedAccount(1_000_000_000);
    receiver.script = [503];
    const task = await video({ callback_url: receiver.url }, unsigned);
    const log = await settledDeliveries(task.body.id, 1, unsigned);
    expect(log).to.include({ signed: false });
    expect(log.data[0].status).to.equal('dropped');
    expect(receiver.received).to.have.length(MAX_WEBHOOK_ATTEMPTS);
    expect(log.data[0].attempts.map((a: any) => [a.attempt, a.ok, a.status_code])).to.deep.equal(receiver.received.map((_, i) => [i + 1, false, 503]));
    for (const [i, attempt] of log.data[0].attempts.entries()) {
      expect(attempt.signature).to.equal(null);
      expect(receiver.received[i]!.headers['x-service-signature']).to.equal(undefined);
      expect(String(attempt.timestamp)).to.equal(receiver.received[i]!.headers['x-service-timestamp']);
    }
    await expectSettledAndAuditClean(gw, [unsigned]);
  });

  it('answers an empty log for a task without a callback, 404 for unknown and other accounts’ tasks, 400 for a bad page', async () => {
    const task = await video({});
    const none = await deliveries(task.body.id);
    expect(none.status).to.equal(200);
    expect(none.body).to.deep.equal({ object: 'list', data: [], has_more: false, next_after: null, callback_url: null, signed: false });
    const { key: stranger } = await gw.fundedAccount(0);
    for (const [id, k] of [[task.body.id, stranger], ['vid_does_not_exist', key]] as const) {
      const res = await deliveries(id, '', k);
      expect(res.status).to.equal(404);
      expect(res.body.error).to.include({ code: 'task_not_found', type: 'not_found_error' });
    }
    for (const [query, param] of [['?after=dlv_unknown', 'after'], ['?limit=0', 'limit'], ['?limit=x', 'limit'], ['?colour=red', 'colour']]) {
      const res = await deliveries(task.body.id, query);
      expect(res.status, query).to.equal(400);
      expect(res.body.error, query).to.include({ type: 'invalid_request_error', param });
    }
    expect((await gw.api(null, 'GET', `/v1/videos/generations/${task.body.id}/webhook/deliveries`)).status).to.equal(401);
  });
});
