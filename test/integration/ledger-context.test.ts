import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { expectSettledAndAuditClean } from '../support/wait';

/** Every money movement names its why in the log: the key, the model, the endpoint, the request or task. */
describe('money events carry who asked, for what, through which endpoint @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => gw.close());

  async function eventsOf(accountId: string, type: string): Promise<any[]> {
    return (await gw.store.readStream(`account-${accountId}`)).filter((e) => e.type === type).map((e) => e.data);
  }

  it('a chat request: reservation and settlement name the key, the model, the route and the request', async () => {
    const { accountId, key, keyId } = await gw.fundedAccount(100_000_000);
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const { response } = await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'hi [sim:tokens=3]' }] }).withResponse();
    const requestId = response.headers.get('x-request-id');
    await expectSettledAndAuditClean(gw, [key]);
    const [reserved] = await eventsOf(accountId, 'FundsReserved');
    expect(reserved.purpose).to.deep.equal({ kind: 'request', ref: requestId, description: 'chat-fast', actor: keyId, model: 'chat-fast', endpoint: 'POST /v1/chat/completions' });
    const [settled] = await eventsOf(accountId, 'ReservationSettled');
    expect(settled.context).to.deep.equal({ actor: keyId, model: 'chat-fast', endpoint: 'POST /v1/chat/completions', kind: 'request', ref: requestId });
  });

  it('a video task that fails: the release names the task stream; an operator refund names the charge it gives back', async () => {
    const { accountId, key, keyId } = await gw.fundedAccount(100_000_000);
    const failed = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'doomed [sim:fail]' }], duration: 4 });
    expect(failed.status).to.equal(200);
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'refund me [sim:tokens=3]' }] });
    await expectSettledAndAuditClean(gw, [key]);
    const [released] = await eventsOf(accountId, 'ReservationReleased');
    expect(released.context).to.deep.equal({ actor: keyId, model: 'video-ref-2.0', endpoint: 'POST /v1/videos/generations', kind: 'task', ref: `video-${failed.body.id}` });

    const [settled] = await eventsOf(accountId, 'ReservationSettled');
    const refund = await gw.admin('POST', `/admin/v1/accounts/${accountId}/refunds`, { reservation_id: settled.reservationId, amount: 1, reference: 'goodwill-1', reason: 'goodwill' });
    expect(refund.status).to.equal(201);
    const [refunded] = await eventsOf(accountId, 'ChargeRefunded');
    expect(refunded.context).to.deep.equal(settled.context);
    await gw.expectAuditClean();
  });
});
