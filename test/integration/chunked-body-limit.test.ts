import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';

/** A body sent without Content-Length that passes the limit: streamed in 64 KiB chunks. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = Buffer.from(text, 'utf8');
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024));
      controller.close();
    },
  });
}

describe('a chunked JSON body over the limit is answered, not cut off @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key, accountId } = await gw.fundedAccount(1_000_000));
  });
  after(async () => gw.close());

  // The spec's lists: 400 for chat; video creation alone has 413.
  for (const [path, limit, status] of [
    ['/v1/chat/completions', 1024 * 1024, 400],
    ['/v1/videos/generations', 5 * 1024 * 1024, 413],
  ] as const) {
    it(`${path}: payload_too_large, nothing reserved, and the gateway keeps answering`, async () => {
      const body = JSON.stringify({ model: 'chat-fast', messages: [{ role: 'user', content: 'a'.repeat(limit) }] });
      const res = await fetch(gw.url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: chunked(body),
        duplex: 'half',
      } as RequestInit);
      const answer = (await res.json()) as { error: { code: string; param: unknown; message: string; type: string } };
      expect(res.status).to.equal(status);
      expect(answer.error.code).to.equal('payload_too_large');
      expect(await gw.balance(key)).to.deep.include({ available: 1_000_000, frozen: 0 });
      const { rows } = await gw.pool.query(`SELECT count(*)::int AS n FROM es_events WHERE stream_id = $1 AND type = 'FundsReserved'`, [`account-${accountId}`]);
      expect(rows[0].n).to.equal(0);
      expect((await gw.api(key, 'GET', '/v1/account')).status).to.equal(200);
    });
  }
});
