import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Channel, UpstreamError } from '../../src/upstreams/channel';
import { upstreamToApiError } from '../../src/http/upstream-errors';

/** A provider's 429 reaches the client with the provider's Retry-After as it was sent. */
describe("a provider's Retry-After (Channel, upstreamToApiError)", () => {
  let server: http.Server;
  let channel: Channel;

  before(async () => {
    // The request's path says what Retry-After to answer with (none for /none); raw bytes, so a
    // value the gateway must not pass on (not printable ASCII) can be sent as a provider would.
    server = http.createServer((req, res) => {
      const value = decodeURIComponent(req.url!.split('/').pop()!);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (value !== 'none') headers['retry-after'] = Buffer.from(value, 'utf8').toString('latin1');
      res.writeHead(429, headers);
      res.end(JSON.stringify({ error: { message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    channel = new Channel({ name: 'limited', protocol: 'openai', auth: { kind: 'none' }, base_url: `http://127.0.0.1:${port}/v1`, timeout_ms: 10_000, max_concurrency: 1 });
  });

  after(async () => {
    await channel.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function refusal(value: string, stream: boolean): Promise<UpstreamError> {
    const path = `/chat/${encodeURIComponent(value)}`;
    try {
      if (stream) await channel.stream(path, { model: 'm' });
      else await channel.json('POST', path, { model: 'm' });
    } catch (err) {
      expect(err).to.be.instanceOf(UpstreamError);
      return err as UpstreamError;
    }
    throw new Error('expected a refusal');
  }

  for (const stream of [false, true]) {
    it(`passes seconds and an HTTP date on unchanged, and 1 when the provider sent none or one it cannot pass on (${stream ? 'a stream' : 'JSON'})`, async () => {
      const cases: [sent: string, answered: string][] = [
        ['17', '17'],
        ['Wed, 21 Oct 2015 07:28:00 GMT', 'Wed, 21 Oct 2015 07:28:00 GMT'],
        ['none', '1'],
        ['17 Sekunden später', '1'],
      ];
      for (const [sent, answered] of cases) {
        const err = await refusal(sent, stream);
        expect(err.code).to.equal('rate_limit_exceeded');
        const api = upstreamToApiError(err);
        expect([api.status, api.options.headers], sent).to.deep.equal([429, { 'retry-after': answered }]);
      }
    });
  }
});
