import { expect } from 'chai';
import type { ChannelConfig } from '../../src/upstreams/channel';
import { probeChannelConfig } from '../../src/upstreams/probe';
import { recordingServer, type RecordingServer } from '../support/recording-server';
import { closedPort } from '../support/closed-port';

describe("a channel's test call", () => {
  let provider: RecordingServer;
  /** The status the provider answers next, and a body that quotes the key (as OpenAI's 401 does). */
  let status = 200;
  before(async () => {
    provider = await recordingServer((request, res) => {
      res.statusCode = status;
      res.end(JSON.stringify({ error: { message: `key ${request.headers.authorization}` } }));
    });
  });
  after(() => provider.close());

  const config = (protocol: string, base_url: string): ChannelConfig => ({
    name: 'probed',
    protocol,
    base_url,
    auth: { kind: 'bearer', apiKey: 'sk-probe-secret' },
    timeout_ms: 5000,
    max_concurrency: 1,
  });

  it("asks an OpenAI channel for its model list and another protocol's channel for its base URL, with the credentials", async () => {
    status = 200;
    expect(await probeChannelConfig(config('openai', `${provider.url}/v1`))).to.include({ outcome: 'ok', status: 200, error: null });
    expect(await probeChannelConfig(config('tavily', `${provider.url}/tavily`))).to.include({ outcome: 'ok', status: 200 });
    expect(provider.seen.slice(-2).map((r) => [r.method, r.url, r.headers.authorization])).to.deep.equal([
      ['GET', '/v1/models', 'Bearer sk-probe-secret'],
      ['GET', '/tavily', 'Bearer sk-probe-secret'],
    ]);
  });

  it('classifies refusals and failures in its own words, never the provider’s', async () => {
    const outcomes: [number, string][] = [
      [401, 'credentials_refused'],
      [403, 'credentials_refused'],
      [404, 'answered_with_error'],
      [503, 'provider_error'],
    ];
    for (const [answer, outcome] of outcomes) {
      status = answer;
      const result = await probeChannelConfig(config('openai', `${provider.url}/v1`));
      expect(result).to.include({ outcome, status: answer });
      expect(result.error).to.be.a('string').and.not.include('sk-probe-secret');
    }
    const silent = await recordingServer(() => undefined);
    try {
      const timedOut = await probeChannelConfig({ ...config('openai', `${silent.url}/v1`), timeout_ms: 100 });
      expect(timedOut).to.include({ outcome: 'timeout', status: null });
    } finally {
      await silent.close();
    }
    const unreachable = await probeChannelConfig(config('openai', `http://127.0.0.1:${await closedPort()}/v1`));
    expect(unreachable).to.include({ outcome: 'unreachable', status: null, error: 'the provider could not be reached' });
  });
});
