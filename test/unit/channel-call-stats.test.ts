import { expect } from 'chai';
import { ChannelCallStats } from '../../src/upstreams/routing/call-stats';

describe('channel call stats: rolling per-process counts of recent upstream calls', () => {
  const MINUTE = 60_000;

  it('counts calls, errors, client errors and the latency of the calls that answered, per channel', () => {
    const now = 10 * MINUTE;
    const stats = new ChannelCallStats(15, () => now);
    stats.observe('a', 'ok', 0.1);
    stats.observe('a', 'ok', 0.3);
    stats.observe('a', 'server_error', 0.2);
    stats.observe('a', 'timeout', 30);
    stats.observe('a', 'client_error', 0.05);
    stats.observe('a', 'aborted', 5);
    stats.observe('b', 'network', 0.001);
    expect(stats.summary('a')).to.deep.equal({
      window_seconds: 900,
      calls: 5,
      errors: 2,
      client_errors: 1,
      error_rate: 0.4,
      // ok 100 + ok 300 + 5xx 200 + 4xx 50; the timeout never answered, the aborted call is not counted.
      latency_ms: { mean: 163, max: 300 },
    });
    expect(stats.summary('b')).to.deep.equal({ window_seconds: 900, calls: 1, errors: 1, client_errors: 0, error_rate: 1, latency_ms: null });
    expect(stats.summary('never-called')).to.deep.equal({ window_seconds: 900, calls: 0, errors: 0, client_errors: 0, error_rate: null, latency_ms: null });
  });

  it('forgets calls older than the window, minute by minute, and reuses the ring', () => {
    let now = 100 * MINUTE + 30_000;
    const stats = new ChannelCallStats(3, () => now);
    stats.observe('a', 'server_error', 1);
    now += MINUTE;
    stats.observe('a', 'ok', 1);
    now += MINUTE;
    expect(stats.summary('a')).to.include({ calls: 2, errors: 1, error_rate: 0.5 });
    now += MINUTE;
    // The first call's minute has left the window (the current minute and the two before it).
    expect(stats.summary('a')).to.include({ calls: 1, errors: 0, error_rate: 0 });
    stats.observe('a', 'ok', 2);
    expect(stats.summary('a')).to.deep.include({ calls: 2, latency_ms: { mean: 1500, max: 2000 } });
    now += 10 * MINUTE;
    expect(stats.summary('a')).to.include({ calls: 0, error_rate: null });
  });

  it('refuses a window that is not a whole number of minutes', () => {
    expect(() => new ChannelCallStats(0, () => 0)).to.throw(RangeError);
    expect(() => new ChannelCallStats(1.5, () => 0)).to.throw(RangeError);
  });
});
