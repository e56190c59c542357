import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { failsTheTask } from '../../src/media-tasks/images/kind';
import { Channel } from '../../src/upstreams/channel';
import { UpstreamError } from '../../src/upstreams/errors';

/**
 * An async image task's poll makes the provider's billable generation: only a failure that proves
 * the provider never saw the request (no connection made) may be retried; one where the request
 * was sent (a timeout, a connection lost) fails the task instead of generating a second time.
 */
describe('async image generation: retried only when the provider never saw the request', () => {
  const channels: Channel[] = [];
  const channelTo = (base: string, timeoutMs = 10_000) => {
    const c = new Channel({ name: 'images', protocol: 'ark', base_url: base, auth: { kind: 'bearer', apiKey: 'k' }, timeout_ms: timeoutMs, max_concurrency: 1 });
    channels.push(c);
    return c;
  };
  const failureOf = async (call: () => Promise<unknown>): Promise<UpstreamError> => {
    try {
      await call();
    } catch (err) {
      expect(err).to.be.instanceOf(UpstreamError);
      return err as UpstreamError;
    }
    throw new Error('the call succeeded');
  };
  /** A server on an ephemeral port answering each request as `handle` says; closed after the test. */
  const servers: http.Server[] = [];
  const serve = async (handle: http.RequestListener): Promise<string> => {
    const server = http.createServer(handle);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  after(async () => {
    await Promise.all(channels.map((c) => c.close()));
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  });

  it('a refused connection is `connect` (nothing sent): the engine retries it', async () => {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const err = await failureOf(() => channelTo(`http://127.0.0.1:${port}`).call({ method: 'POST', path: '/images/generations', body: {} }));
    expect([err.status, err.kind, err.code]).to.deep.equal([0, 'connect', 'upstream_unreachable']);
    expect(failsTheTask(err)).to.equal(false);
  });

  it('a connection lost after the request arrived is `network`: the task fails, no second generation', async () => {
    let received = 0;
    const base = await serve((req) => {
      received += 1;
      req.socket.destroy();
    });
    const err = await failureOf(() => channelTo(base).call({ method: 'POST', path: '/images/generations', body: {} }));
    expect(received, 'the provider saw the request').to.equal(1);
    expect([err.status, err.kind]).to.deep.equal([0, 'network']);
    expect(failsTheTask(err)).to.equal(true);
  });

  it('a generation that outlives the channel\'s deadline is `timeout`: the task fails, no second generation', async () => {
    const base = await serve(() => undefined);
    const err = await failureOf(() => channelTo(base, 200).call({ method: 'POST', path: '/images/generations', body: {} }));
    expect([err.status, err.kind, err.code]).to.deep.equal([0, 'timeout', 'upstream_timeout']);
    expect(failsTheTask(err)).to.equal(true);
  });

  it('a rate limit and a refusal of the gateway\'s key are retried; a refusal or a provider failure fails the task', () => {
    expect(failsTheTask(new UpstreamError(429, 'slow down', 'rate_limited'))).to.equal(false);
    expect(failsTheTask(new UpstreamError(401, 'key', 'upstream_auth_failed'))).to.equal(false);
    expect(failsTheTask(new UpstreamError(400, 'bad', 'InvalidParameter'))).to.equal(true);
    expect(failsTheTask(new UpstreamError(500, 'boom', 'InternalServiceError'))).to.equal(true);
  });
});
