import net from 'node:net';
import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { sample, scrapeMetrics } from '../support/metrics';
import { waitFor } from '../support/wait';

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

describe('request bodies that do not end as declared @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key, accountId } = await gw.fundedAccount(1_000_000));
  });
  after(async () => gw.close());

  /** The account's balance is whole and no reservation was ever appended. */
  async function expectNothingReserved(): Promise<void> {
    expect(await gw.balance(key)).to.deep.include({ available: 1_000_000, frozen: 0 });
    const { rows } = await gw.pool.query(`SELECT count(*)::int AS n FROM es_events WHERE stream_id = $1 AND type = 'FundsReserved'`, [`account-${accountId}`]);
    expect(rows[0].n).to.equal(0);
  }

  describe('a chunked JSON body over the limit is answered, not cut off', () => {
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
        await expectNothingReserved();
        expect((await gw.api(key, 'GET', '/v1/account')).status).to.equal(200);
      });
    }
  });

  describe('a client that leaves in the middle of its body', () => {
    /** The count of chat completions answered with `status`, from GET /metrics. */
    async function chatAnswers(status: number): Promise<number> {
      return sample(await scrapeMetrics(gw.url), 'gateway_http_requests_total', { route: '/v1/chat/completions', status: String(status) });
    }

    it('ends the request as a bad request (no server error), reserves nothing, and the gateway keeps answering', async () => {
      const body = JSON.stringify({ model: 'chat-fast', messages: [{ role: 'user', content: 'hello' }] });
      // Koa prints the connection's failure to stderr unless the gateway logs it (as JSON) itself.
      const printed: unknown[][] = [];
      const print = console.error;
      console.error = (...args: unknown[]) => printed.push(args);
      // The gateway is shared with the tests before: count from where they left the counters.
      const [bad, failed] = [await chatAnswers(400), await chatAnswers(500)];
      try {
        const { port } = new URL(gw.url);
        const socket = net.connect(Number(port), '127.0.0.1');
        await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
        // Half of the declared body, then the connection goes (once the half is on its way).
        await new Promise<void>((resolve, reject) =>
          socket.write(
            `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\n` +
              `content-length: ${body.length}\r\n\r\n${body.slice(0, body.length >> 1)}`,
            (err) => (err ? reject(err) : resolve()),
          ),
        );
        socket.destroy();
        // The request ends: it would stay in flight for ever if the body reader missed the close
        // (which comes before the reader starts, or while it waits for the rest, as it happens).
        await waitFor('the abandoned request to end', async () => (await chatAnswers(400)) === bad + 1);
        expect(await chatAnswers(500)).to.equal(failed);
        await expectNothingReserved();
        expect((await gw.api(key, 'POST', '/v1/chat/completions', JSON.parse(body))).status).to.equal(200);
      } finally {
        console.error = print;
      }
      expect(printed).to.deep.equal([]);
    });
  });
});
