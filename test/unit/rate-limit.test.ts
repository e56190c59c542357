import { expect } from 'chai';
import { ApiError } from '../../src/http/errors';
import { RateLimiter } from '../../src/http/rate-limit';
import { FleetLimiter } from '../../src/limits/fleet-limiter';
import { MemoryLimitStore } from '../../src/limits/memory-store';

/** The per-key token bucket: refusal with 429 (take) and the bounded wait of web Q&A (waitTurn). */
describe('rate limiter', () => {
  const limiters: FleetLimiter[] = [];
  after(() => Promise.all(limiters.map((l) => l.close())));

  /** A limiter on a hand-moved clock whose sleeps only record their length, counting in a store of its own without leases (exactly). */
  function limiter(perMinute: number) {
    let now = 1_000_000;
    const slept: number[] = [];
    const limits = new FleetLimiter(new MemoryLimitStore(), { now: () => now, leaseMs: 0, probeMs: 60_000, sweepMs: 60_000, logger: { warn() {}, info() {}, error() {} } });
    limiters.push(limits);
    const rl = new RateLimiter(perMinute, limits, async (ms) => {
      slept.push(ms);
    });
    return { rl, slept, advance: (ms: number) => (now += ms) };
  }

  async function refusal(work: () => unknown): Promise<ApiError> {
    try {
      await work();
    } catch (err) {
      expect(err).to.be.instanceOf(ApiError);
      return err as ApiError;
    }
    throw new Error('expected a refusal');
  }

  it('take: a full bucket of perMinute requests, then 429 with Retry-After', async () => {
    const { rl } = limiter(60);
    for (let i = 0; i < 60; i++) await rl.take('k');
    const err = await refusal(() => rl.take('k'));
    expect(err.status).to.equal(429);
    expect(err.options.headers).to.deep.equal({ 'retry-after': '1' });
    await rl.take('other');
  });

  it('waitTurn: waits for the next token when it is due within the bound, queueing waiters in order', async () => {
    const { rl, slept } = limiter(60); // one token a second
    for (let i = 0; i < 60; i++) await rl.waitTurn('k', 2_000);
    expect(slept).to.deep.equal([]);
    await rl.waitTurn('k', 2_000);
    await rl.waitTurn('k', 2_000);
    // The first waiter is due in 1 s, the second (its token promised after the first's) in 2 s.
    expect(slept).to.deep.equal([1_000, 2_000]);
    const err = await refusal(() => rl.waitTurn('k', 2_000));
    expect(err.status).to.equal(502);
    expect(err.code).to.equal('gateway_busy');
    expect(Number(err.options.headers?.['retry-after'])).to.equal(3);
    expect(slept, 'a refused request does not wait').to.have.length(2);
  });

  it('waitTurn: a refusal leaves the bucket as it was, and time frees turns again', async () => {
    const { rl, slept, advance } = limiter(60);
    for (let i = 0; i < 60; i++) await rl.take('k');
    await refusal(() => rl.waitTurn('k', 500));
    advance(600);
    await rl.waitTurn('k', 500);
    expect(slept).to.deep.equal([400]);
    advance(10_000);
    await rl.waitTurn('k', 0);
    expect(slept).to.deep.equal([400]);
  });

  it('a limit of 0 disables both', async () => {
    const { rl, slept } = limiter(0);
    for (let i = 0; i < 1000; i++) await rl.take('k');
    await rl.waitTurn('k', 0);
    expect(slept).to.deep.equal([]);
  });

  it("a key's own rate replaces the gateway's, for take and waitTurn alike", async () => {
    const { rl, slept, advance } = limiter(600);
    await rl.take('slow', 2);
    await rl.take('slow', 2);
    const err = await refusal(() => rl.take('slow', 2));
    expect(err.status).to.equal(429);
    expect(err.message).to.contain('rate limit of 2 requests per minute');
    expect(err.options.headers).to.deep.equal({ 'retry-after': '30' });
    for (let i = 0; i < 100; i++) await rl.take('fast');
    advance(30_000);
    await rl.waitTurn('slow', 30_000, 2);
    await rl.waitTurn('slow', 30_000, 2);
    expect(slept).to.deep.equal([30_000]);
    expect((await refusal(() => rl.waitTurn('slow', 30_000, 2))).code).to.equal('gateway_busy');
  });

  describe('tokens per minute', () => {
    const key = (tokensPerMinute: number | null, rateLimitPerMinute: number | null = null) => ({ keyId: 'k', rateLimitPerMinute, tokensPerMinute });

    it('counts the estimate at admission (at most the whole limit), corrected by the tokens used', async () => {
      const { rl } = limiter(600);
      const first = await rl.admit(key(1_000), 700, null);
      expect(first).to.deep.equal({ keyId: 'k', tokensPerMinute: 1_000, counted: 700 });
      const over = await refusal(() => rl.admit(key(1_000), 400, null));
      expect(over.status).to.equal(429);
      expect(over.code).to.equal('rate_limit_exceeded');
      expect(over.message).to.contain('tokens-per-minute limit of 1000');
      expect(over.options.headers).to.deep.equal({ 'retry-after': '6' }); // 100 tokens short at 1,000 a minute: 6 s
      await rl.settleTokens(first, 0); // used none (released): all 700 given back, the bucket is full again
      expect(await rl.admit(key(1_000), 5_000, null), 'a request larger than the limit counts the whole limit').to.deep.equal({ keyId: 'k', tokensPerMinute: 1_000, counted: 1_000 });
    });

    it('charges usage beyond the count, and counts nothing for a key without the limit', async () => {
      const { rl } = limiter(600);
      const first = await rl.admit(key(1_000), 500, null);
      await rl.settleTokens(first, 900); // 400 more than counted: 100 left
      await refusal(() => rl.admit(key(1_000), 200, null));
      expect(await rl.admit(key(null), 1_000_000, null)).to.equal(null);
      await rl.settleTokens(null, 5);
    });

    it('gives the request its turn back when its tokens are refused', async () => {
      const { rl } = limiter(600);
      await rl.admit(key(100, 2), 100, null);
      await refusal(() => rl.admit(key(100, 2), 100, null)); // the rate's second turn is given back
      const err = await refusal(() => rl.admit(key(null, 2), 0, null).then(() => rl.admit(key(null, 2), 0, null)));
      expect(err.message, 'two turns of 2 a minute: the first request and this one').to.contain('rate limit of 2 requests per minute');
    });

    it('waits for its turn of tokens, or answers 502 gateway_busy, for endpoints without a 429', async () => {
      const { rl, slept } = limiter(600);
      await rl.admit(key(600), 600, { waitMs: 2_000 });
      await rl.admit(key(600), 10, { waitMs: 2_000 }); // 10 tokens at 600 a minute: 1 s
      expect(slept).to.deep.equal([1_000]);
      const busy = await refusal(() => rl.admit(key(600), 100, { waitMs: 2_000 }));
      expect([busy.status, busy.code]).to.deep.equal([502, 'gateway_busy']);
      expect(busy.message).to.contain('over its tokens-per-minute limit of 600');
    });
  });
});
