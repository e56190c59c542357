import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Channel } from '../../src/upstreams/channel';

/** A JSON answer may arrive in several body chunks: a character split between two must come out whole. */
describe('upstream JSON answers (Channel.json)', () => {
  let server: http.Server;
  let channel: Channel;
  const answer = { choices: [{ message: { content: '会议纪要：风险 🎉 ok' } }] };

  before(async () => {
    const bytes = Buffer.from(JSON.stringify(answer), 'utf8');
    // Inside '会' (three bytes in UTF-8): the first chunk ends after its first byte.
    const cut = bytes.indexOf(Buffer.from('会', 'utf8')) + 1;
    server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // The pause only gives the first chunk time to be read on its own, so that a decoder that
      // works chunk by chunk would show here; the answer is right however the chunks arrive.
      res.write(bytes.subarray(0, cut), () => setTimeout(() => res.end(bytes.subarray(cut)), 20));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    channel = new Channel({ name: 'split', protocol: 'openai', auth: { kind: 'none' }, base_url: `http://127.0.0.1:${port}/v1`, timeout_ms: 10_000, max_concurrency: 1 });
  });

  after(async () => {
    await channel.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('decodes a UTF-8 character split between two body chunks whole', async () => {
    expect(await channel.json('POST', '/chat/completions', { model: 'm' })).to.deep.equal(answer);
  });
});
