import { expect } from 'chai';
import type { ChannelRoute, ModelEntry } from '../../src/billing/catalog';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/log';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { UpstreamError } from '../../src/upstreams/errors';
import { Upstreams } from '../../src/upstreams/registry';
import { classifyFailure, retryAfterMs } from '../../src/upstreams/routing/failover';
import { ChannelHealthBook, type ChannelHealthEvent } from '../../src/upstreams/routing/health';
import { attemptOrder } from '../../src/upstreams/routing/order';
import { ChannelsBusyError, Router } from '../../src/upstreams/routing/router';
import { seededRandom } from '../support/seeded-random';

const CIRCUIT = { failureThreshold: 3, openMs: 1_000, maxOpenMs: 3_000, cooldownMs: 5_000, maxCooldownMs: 60_000 };
const http = (status: number, retryAfter: string | null = null) => new UpstreamError(status, `HTTP ${status}`, null, 'http', retryAfter);

describe('channel routing: the order of attempts', () => {
  const route = (name: string, priority: number, weight = 1): ChannelRoute => ({ name, priority, weight });

  it('tries a one-channel model on its channel', () => {
    expect([...attemptOrder([route('a', 0)], () => 0.5)]).to.deep.equal(['a']);
  });

  it('tries every higher priority before a lower one', () => {
    const random = seededRandom(1);
    for (let i = 0; i < 50; i++) {
      const order = [...attemptOrder([route('a', 5), route('b', 5), route('c', 1), route('d', 0)], random)];
      expect(order.slice(0, 2)).to.have.members(['a', 'b']);
      expect(order.slice(2)).to.deep.equal(['c', 'd']);
    }
  });

  it('picks within one priority in proportion to the weights, each channel once', () => {
    const random = seededRandom(7);
    let firstA = 0;
    const draws = 4000;
    for (let i = 0; i < draws; i++) {
      const order = [...attemptOrder([route('a', 0, 3), route('b', 0, 1)], random)];
      expect(order).to.have.members(['a', 'b']).and.have.length(2);
      if (order[0] === 'a') firstA++;
    }
    // 3:1 → 75 % of first picks; 4000 draws keep a fair generator within ±3 %.
    expect(firstA / draws).to.be.within(0.72, 0.78);
  });
});

describe('channel routing: which failures fail over', () => {
  it('fails over a refused connection, a timeout, a broken connection, a 5xx, a 429 and refused credentials', () => {
    expect(classifyFailure(new UpstreamError(0, 'x', null, 'connect'), false)).to.deep.equal({ failover: true, reason: 'connect' });
    expect(classifyFailure(new UpstreamError(0, 'x', null, 'timeout'), false)).to.deep.equal({ failover: true, reason: 'timeout' });
    expect(classifyFailure(new UpstreamError(0, 'x', null, 'network'), false)).to.deep.equal({ failover: true, reason: 'network' });
    expect(classifyFailure(http(503), false)).to.deep.equal({ failover: true, reason: 'server_error' });
    expect(classifyFailure(http(429), false)).to.deep.equal({ failover: true, reason: 'rate_limited' });
    expect(classifyFailure(http(401), false)).to.deep.equal({ failover: true, reason: 'credentials_refused' });
    expect(classifyFailure(http(403), false)).to.deep.equal({ failover: true, reason: 'credentials_refused' });
  });

  it('never fails over a refusal of the request, an unreadable answer or anything not from the transport', () => {
    for (const status of [400, 404, 409, 413, 422]) expect(classifyFailure(http(status), false), `HTTP ${status}`).to.deep.equal({ failover: false });
    expect(classifyFailure(new UpstreamError(502, 'x', null, 'protocol'), false)).to.deep.equal({ failover: false });
    expect(classifyFailure(new Error('a bug'), false)).to.deep.equal({ failover: false });
  });

  it('never fails over a call whose outcome matters once it may have been sent (timeout, broken connection); a refused connection still is', () => {
    expect(classifyFailure(new UpstreamError(0, 'x', null, 'timeout'), true)).to.deep.equal({ failover: false });
    expect(classifyFailure(new UpstreamError(0, 'x', null, 'network'), true)).to.deep.equal({ failover: false });
    expect(classifyFailure(new UpstreamError(0, 'x', null, 'connect'), true)).to.deep.equal({ failover: true, reason: 'connect' });
    expect(classifyFailure(http(503), true)).to.deep.equal({ failover: true, reason: 'server_error' });
  });

  it('reads Retry-After as seconds or as an HTTP date, capped; anything else is none', () => {
    const now = Date.parse('2026-12-05T12:00:00Z');
    expect(retryAfterMs('17', now, 60_000)).to.equal(17_000);
    expect(retryAfterMs('Sat, 05 Dec 2026 12:00:30 GMT', now, 60_000)).to.equal(30_000);
    expect(retryAfterMs('Sat, 05 Dec 2026 11:00:00 GMT', now, 60_000)).to.equal(0);
    expect(retryAfterMs('999999999', now, 60_000)).to.equal(60_000);
    expect(retryAfterMs('soon', now, 60_000)).to.equal(null);
    expect(retryAfterMs('-5', now, 60_000)).to.equal(null);
    expect(retryAfterMs(null, now, 60_000)).to.equal(null);
  });
});

describe('channel routing: the health of a channel', () => {
  let now: number;
  let events: ChannelHealthEvent[];
  let book: ChannelHealthBook;
  beforeEach(() => {
    now = Date.parse('2026-12-05T12:00:00Z');
    events = [];
    book = new ChannelHealthBook(CIRCUIT, () => now, (e) => events.push(e));
  });
  const types = () => events.map((e) => e.type);

  it('opens the circuit at the threshold of consecutive failures, one event, not one per failure', () => {
    book.failed('a', 'server_error');
    book.failed('a', 'server_error');
    expect(book.admit('a')).to.equal('yes');
    book.failed('a', 'server_error');
    expect(book.admit('a')).to.equal('no');
    book.failed('a', 'server_error');
    expect(types()).to.deep.equal(['ChannelCircuitOpened']);
    expect(book.health('a', null)).to.deep.include({ state: 'open', reason: 'server_error', consecutive_failures: 4 });
  });

  it('a success in between starts the count again', () => {
    book.failed('a', 'timeout');
    book.failed('a', 'timeout');
    book.succeeded('a');
    book.failed('a', 'timeout');
    book.failed('a', 'timeout');
    expect(book.admit('a')).to.equal('yes');
    expect(events).to.deep.equal([]);
  });

  it('lets exactly one probe through after the pause; a failed probe doubles the pause up to its cap; a good one closes', () => {
    for (let i = 0; i < 3; i++) book.failed('a', 'server_error');
    now += 999;
    expect(book.admit('a')).to.equal('no');
    now += 1;
    expect(book.admit('a')).to.equal('probe');
    expect(book.admit('a'), 'a second request while the probe runs').to.equal('no');
    book.failed('a', 'server_error');
    expect(book.waitMs('a')).to.equal(2_000);
    now += 2_000;
    expect(book.admit('a')).to.equal('probe');
    book.failed('a', 'server_error');
    expect(book.waitMs('a')).to.equal(3_000);
    now += 3_000;
    expect(book.admit('a')).to.equal('probe');
    book.failed('a', 'server_error');
    expect(book.waitMs('a'), 'capped').to.equal(3_000);
    now += 3_000;
    expect(book.admit('a')).to.equal('probe');
    book.succeeded('a', 12);
    expect(book.admit('a')).to.equal('yes');
    expect(book.health('a', null)).to.deep.equal({ state: 'closed', until: null, reason: null, consecutive_failures: 0, last_latency_ms: 12 });
    expect(types()).to.deep.equal([
      'ChannelCircuitOpened',
      'ChannelCircuitHalfOpened',
      'ChannelCircuitOpened',
      'ChannelCircuitHalfOpened',
      'ChannelCircuitOpened',
      'ChannelCircuitHalfOpened',
      'ChannelCircuitOpened',
      'ChannelCircuitHalfOpened',
      'ChannelCircuitClosed',
    ]);
  });

  it('a probe the client abandoned lets the next request probe', () => {
    for (let i = 0; i < 3; i++) book.failed('a', 'server_error');
    now += 1_000;
    expect(book.admit('a')).to.equal('probe');
    book.released('a');
    expect(book.admit('a')).to.equal('probe');
  });

  it('cools a channel down for its Retry-After (or the default), never shorter by a later 429, never past the cap', () => {
    book.failed('a', 'rate_limited', 10_000);
    expect(book.admit('a')).to.equal('no');
    expect(book.health('a', null)).to.deep.include({ state: 'cooling_down', reason: 'rate_limited' });
    book.failed('a', 'rate_limited', 2_000);
    expect(book.waitMs('a')).to.equal(10_000);
    now += 10_000;
    expect(book.admit('a')).to.equal('yes');
    book.failed('a', 'rate_limited', null);
    expect(book.waitMs('a')).to.equal(5_000);
    now += 5_000;
    book.failed('a', 'rate_limited', 10 * 365 * 86_400_000);
    expect(book.waitMs('a')).to.equal(60_000);
    expect(types()).to.deep.equal(['ChannelCooldownStarted', 'ChannelCooldownStarted', 'ChannelCooldownStarted']);
    // 429s carry their own pause: they do not open the circuit.
    expect(book.health('a', null).consecutive_failures).to.equal(0);
  });

  it('disables a channel whose credentials were refused until it is mended, once', () => {
    book.failed('a', 'credentials_refused', null, 'channel a: the provider refused the gateway\'s credentials (HTTP 401)');
    book.failed('a', 'credentials_refused', null, 'again');
    expect(book.admit('a')).to.equal('no');
    expect(book.waitMs('a')).to.equal(null);
    expect(book.health('a', null)).to.deep.include({ state: 'disabled', reason: 'channel a: the provider refused the gateway\'s credentials (HTTP 401)' });
    expect(types()).to.deep.equal(['ChannelCredentialsRefused']);
    book.mend('a');
    expect(book.admit('a')).to.equal('yes');
  });

  it('applies another process\'s transitions without recording them again', () => {
    book.apply({ type: 'ChannelCircuitOpened', data: { channel: 'a', until: new Date(now + 4_000).toISOString(), reason: 'timeout', consecutive_failures: 3, pause_ms: 4_000 } });
    expect(book.admit('a')).to.equal('no');
    expect(book.health('a', null)).to.deep.include({ state: 'open', reason: 'timeout' });
    book.apply({ type: 'ChannelCircuitClosed', data: { channel: 'a' } });
    expect(book.admit('a')).to.equal('yes');
    book.apply({ type: 'ChannelCooldownStarted', data: { channel: 'b', until: new Date(now + 3_000).toISOString(), reason: 'rate_limited' } });
    expect(book.waitMs('b')).to.equal(3_000);
    book.apply({ type: 'ChannelCredentialsRefused', data: { channel: 'c', reason: 'refused' } });
    expect(book.admit('c')).to.equal('no');
    expect(events).to.deep.equal([]);
  });

  it('shows an operator\'s disable before anything else', () => {
    expect(book.health('a', 'maintenance')).to.deep.equal({ state: 'disabled', until: null, reason: 'maintenance', consecutive_failures: 0 });
  });
});

describe('channel routing: the router and the channel set', () => {
  const logger = createLogger('silent');
  const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
  const entry = (name: string, port = 9) => ({ name, protocol: 'openai', base_url: `http://127.0.0.1:${port}/v1`, api_key: `sk-${name}` });
  let upstreams: Upstreams;
  let now: number;
  let router: Router;
  let failovers: string[];
  const model = (channels: ChannelRoute[]): ModelEntry => ({ ...catalog.all().find((m) => m.id === 'chat-fast')!, id: 'm', channel: channels[0]!.name, channels });
  const two = model([{ name: 'a', priority: 1, weight: 1 }, { name: 'b', priority: 0, weight: 1 }]);

  beforeEach(async () => {
    const config = loadConfig({ CHANNELS: JSON.stringify([entry('default'), entry('a'), entry('b')]) });
    upstreams = await Upstreams.start(config, catalog, logger);
    now = Date.parse('2026-12-05T12:00:00Z');
    failovers = [];
    router = new Router(upstreams, { ...CIRCUIT, clock: () => new Date(now) }, { failover: (c, r) => failovers.push(`${c}:${r}`), transition: () => undefined });
  });
  afterEach(() => upstreams.close());

  it('answers from the first channel that serves, naming it, after failing over the others', async () => {
    const asked: string[] = [];
    const served = await router.attempt(two, async (channel) => {
      asked.push(channel.name);
      if (channel.name === 'a') throw http(502);
      return 'answer';
    });
    expect(served).to.deep.equal({ value: 'answer', channel: 'b' });
    expect(asked).to.deep.equal(['a', 'b']);
    expect(failovers).to.deep.equal(['a:server_error']);
  });

  it('throws the last channel\'s error when every channel failed, and a refusal of the request at once', async () => {
    const err = await router.attempt(two, async () => Promise.reject(http(503))).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UpstreamError).and.not.be.instanceOf(ChannelsBusyError);
    const asked: string[] = [];
    const refused = await router
      .attempt(two, async (channel) => {
        asked.push(channel.name);
        throw http(400);
      })
      .catch((e: unknown) => e);
    expect((refused as UpstreamError).status).to.equal(400);
    expect(asked).to.deep.equal(['a']);
  });

  it('sends nothing when every channel is cooling down, and names the shortest wait in whole seconds, rounded up', async () => {
    await router.attempt(two, async (channel) => Promise.reject(http(429, channel.name === 'a' ? '30' : '4'))).catch(() => undefined);
    now += 1_500;
    let asked = 0;
    const err = await router
      .attempt(two, async () => {
        asked++;
        return 'x';
      })
      .catch((e: unknown) => e);
    expect(asked).to.equal(0);
    expect(err).to.be.instanceOf(ChannelsBusyError);
    expect((err as ChannelsBusyError).retryAfterSeconds).to.equal(3);
    expect((err as ChannelsBusyError).status).to.equal(429);
  });

  it('calls only the channel holding the state when told, whatever its health, never failing over', async () => {
    await router.attempt(two, async () => Promise.reject(http(429, '60'))).catch(() => undefined);
    const asked: string[] = [];
    const served = await router.attempt(
      two,
      async (channel) => {
        asked.push(channel.name);
        return 'continued';
      },
      { only: 'a' },
    );
    expect(served).to.deep.equal({ value: 'continued', channel: 'a' });
    const failed = await router.attempt(two, async () => Promise.reject(http(503)), { only: 'b' }).catch((e: unknown) => e);
    expect((failed as UpstreamError).status).to.equal(503);
    expect(asked).to.deep.equal(['a']);
  });

  describe('a one-channel model obeys its channel\'s health as a model of several does', () => {
    const one = model([{ name: 'a', priority: 0, weight: 1 }]);
    const counting = () => {
      const asked = { calls: 0 };
      return { asked, call: async () => (asked.calls++, 'answer') };
    };

    it('sends nothing while the channel cools down after a 429, naming the wait left, then asks it again', async () => {
      const first = await router.attempt(one, async () => Promise.reject(http(429, '60'))).catch((e: unknown) => e);
      expect(first, 'the provider\'s own 429 is the first answer').to.be.instanceOf(UpstreamError).and.not.be.instanceOf(ChannelsBusyError);
      expect(router.health('a').state).to.equal('cooling_down');
      now += 20_500;
      const { asked, call } = counting();
      const busy = await router.attempt(one, call).catch((e: unknown) => e);
      expect(asked.calls).to.equal(0);
      expect(busy).to.be.instanceOf(ChannelsBusyError);
      expect((busy as ChannelsBusyError).retryAfterSeconds, '39.5 s left, rounded up').to.equal(40);
      now += 39_500;
      expect(await router.attempt(one, call)).to.deep.equal({ value: 'answer', channel: 'a' });
      expect(asked.calls).to.equal(1);
    });

    it('stops asking a channel whose credentials were refused until an operator enables it again', async () => {
      await router.attempt(one, async () => Promise.reject(http(401))).catch(() => undefined);
      expect(router.health('a')).to.deep.include({ state: 'disabled' });
      const { asked, call } = counting();
      const refused = await router.attempt(one, call).catch((e: unknown) => e);
      expect(asked.calls).to.equal(0);
      expect(refused).to.be.instanceOf(UpstreamError).and.not.be.instanceOf(ChannelsBusyError);
      expect((refused as UpstreamError).code, 'nothing to wait for: only an operator mends it').to.equal('upstream_unavailable');
      upstreams.setEnabled('a', false);
      upstreams.setEnabled('a', true);
      expect(await router.attempt(one, call)).to.deep.equal({ value: 'answer', channel: 'a' });
    });

    it('opens the circuit after repeated failures, and lets one probe through after the pause', async () => {
      for (let i = 0; i < CIRCUIT.failureThreshold; i++) await router.attempt(one, async () => Promise.reject(http(503))).catch(() => undefined);
      expect(router.health('a').state).to.equal('open');
      const { asked, call } = counting();
      const busy = await router.attempt(one, call).catch((e: unknown) => e);
      expect(asked.calls).to.equal(0);
      expect((busy as ChannelsBusyError).retryAfterSeconds).to.equal(CIRCUIT.openMs / 1000);
      now += CIRCUIT.openMs;
      expect(await router.attempt(one, call)).to.deep.equal({ value: 'answer', channel: 'a' });
      expect(router.health('a').state, 'the probe answered').to.equal('closed');
    });

    it('answers 502 upstream_unavailable when an operator disabled its channel, asking nothing', async () => {
      upstreams.setEnabled('a', false);
      const { asked, call } = counting();
      const err = await router.attempt(one, call).catch((e: unknown) => e);
      expect(asked.calls).to.equal(0);
      expect((err as UpstreamError).status).to.equal(502);
    });
  });

  it('does not count a client that left against the channel', async () => {
    const abort = new AbortController();
    abort.abort();
    for (let i = 0; i < 5; i++) {
      await router.attempt(two, async () => Promise.reject(new DOMException('gone', 'AbortError')), { signal: abort.signal }).catch(() => undefined);
    }
    expect(router.health('a').consecutive_failures).to.equal(0);
    expect(failovers).to.deep.equal([]);
  });

  it('skips a channel an operator disabled and comes back to it once enabled, mended', async () => {
    upstreams.setEnabled('a', false, 'maintenance');
    expect(router.health('a')).to.deep.include({ state: 'disabled', reason: 'maintenance' });
    expect((await router.attempt(two, async () => 'ok')).channel).to.equal('b');
    await router.attempt(two, async () => Promise.reject(http(401))).catch(() => undefined);
    expect(router.health('b').state).to.equal('disabled');
    const err = await router.attempt(two, async () => 'never').catch((e: unknown) => e);
    expect((err as UpstreamError).status, 'every channel disabled: a 502, no Retry-After to promise').to.equal(502);
    upstreams.setEnabled('a', true);
    expect((await router.attempt(two, async () => 'ok')).channel).to.equal('a');
  });

  it('update keeps an unchanged channel\'s object, replaces and mends a changed one, drops a removed one', async () => {
    const a = upstreams.channel('a');
    const b = upstreams.channel('b');
    await router.attempt(two, async (channel) => (channel.name === 'b' ? 'ok' : Promise.reject(http(403)))).catch(() => undefined);
    expect(router.health('a').state).to.equal('disabled');
    const mended: string[] = [];
    upstreams.onMended((name) => mended.push(name));
    const config = loadConfig({ CHANNELS: JSON.stringify([entry('default'), { ...entry('a'), api_key: 'sk-rotated' }, entry('b')]) });
    await upstreams.update(config.channels!);
    expect(upstreams.channel('b')).to.equal(b);
    expect(upstreams.channel('a')).not.to.equal(a);
    expect(mended).to.deep.equal(['a']);
    expect(router.health('a').state, 'rotated credentials mend the refusal').to.equal('closed');
    await upstreams.update(config.channels!.filter((c) => c.name !== 'b'));
    expect(upstreams.names()).to.have.members(['default', 'a']);
    expect(() => upstreams.channel('b')).to.throw(/not configured/);
  });
});
