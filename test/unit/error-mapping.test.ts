import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { expect } from 'chai';
import { DomainError } from '../../src/domain/decider';
import type { GatewayState } from '../../src/http/context';
import { shapedRouter, unmatchedShape } from '../../src/http/error-shape';
import { ApiError, errorMiddleware, toApiError } from '../../src/http/errors';
import { ReadModelBehindError } from '../../src/projections-runtime/progress';

describe('domain errors reach HTTP through one table (src/http/errors.ts)', () => {
  it('answers each code with its status; a code the table does not list is 400', () => {
    const statusOf = (code: string) => toApiError(new DomainError(code, 'refused'))!.status;
    expect(statusOf('insufficient_balance')).to.equal(402);
    expect(statusOf('task_not_found')).to.equal(404);
    expect(statusOf('task_finished')).to.equal(409);
    expect(statusOf('idempotent_request_in_progress')).to.equal(429);
    expect(statusOf('no_callback')).to.equal(400);
    expect(statusOf('a_code_nobody_mapped')).to.equal(400);
  });

  it('keeps the code and message, names the field from details.param, and adds the status’s headers', () => {
    const reused = toApiError(new DomainError('idempotency_key_reused', 'used with another body', { param: 'Idempotency-Key' }))!;
    expect(reused).to.be.instanceOf(ApiError);
    expect([reused.code, reused.message, reused.options.param]).to.deep.equal(['idempotency_key_reused', 'used with another body', 'Idempotency-Key']);
    expect(toApiError(new DomainError('idempotent_request_in_progress', 'busy'))!.options.headers).to.deep.equal({ 'retry-after': '1' });
    expect(toApiError(new DomainError('idempotent_request_in_progress', 'busy', { retryAfterSeconds: 7 }))!.options.headers, 'the seconds left on the lease').to.deep.equal({ 'retry-after': '7' });
    expect(toApiError(new DomainError('insufficient_balance', 'short'))!.options.headers).to.deep.equal({ 'x-should-retry': 'false' });
    expect(toApiError(new DomainError('task_finished', 'done'))!.options.headers).to.deep.equal({});
  });

  it('answers a view that has not caught up with 503 and Retry-After, and leaves other errors alone', () => {
    const behind = toApiError(new ReadModelBehindError('task t_1'))!;
    expect([behind.status, behind.code, behind.options.headers]).to.deep.equal([503, 'read_model_behind', { 'retry-after': '1' }]);
    expect(toApiError(new Error('boom'))).to.equal(null);
  });
});

describe('error shapes by endpoint group (src/http/error-shape.ts)', () => {
  const risk = shapedRouter('risk', { prefix: '/v1/agent/risk', prefixes: ['/v1/agent/risk/'] });
  const minutes = shapedRouter('minutes', { prefix: '/v1/audio/minutes', prefixes: ['/v1/audio/minutes'] });
  const plain = new Router<GatewayState>({ sensitive: true });
  const shapeOf = unmatchedShape([plain, risk, minutes]);

  it('gives an unmatched path the shape of the group whose prefix covers it', () => {
    expect(shapeOf('/v1/agent/risk/nowhere')).to.equal('risk');
    expect(shapeOf('/v1/audio/minutes')).to.equal('minutes');
    expect(shapeOf('/v1/audio/minutes/t_1/extra')).to.equal('minutes');
  });

  it('reads a prefix ending in / as the paths below it only, any other as the path and those below it', () => {
    expect(shapeOf('/v1/agent/risk')).to.equal('openai');
    expect(shapeOf('/v1/audio/minutesx')).to.equal('openai');
    expect(shapeOf('/v1/chat/completions')).to.equal('openai');
  });

  it('renders every error of a shaped router’s routes in its shape, over HTTP', async () => {
    const router = shapedRouter('minutes', { prefixes: ['/v1/summaries'] });
    router.get('/v1/summaries/:id', () => {
      throw new ApiError(429, 'rate_limited', 'slow down');
    });
    router.post('/v1/summaries', () => {
      throw new DomainError('task_not_found', 'no such task');
    });
    const app = new Koa<GatewayState>();
    app.use(errorMiddleware);
    app.use(router.routes());
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const limited = await fetch(`${base}/v1/summaries/s_1`);
      expect([limited.status, await limited.json()]).to.deep.equal([429, { error: 'slow down', type: 'rate_limit_error' }]);
      const missing = await fetch(`${base}/v1/summaries`, { method: 'POST' });
      expect([missing.status, await missing.json()]).to.deep.equal([404, { error: 'no such task', type: 'invalid_request_error' }]);
      // Another path of the same app keeps the default shape.
      const other = await fetch(`${base}/v1/elsewhere`);
      expect(other.status).to.equal(404);
      expect(((await other.json()) as { error: object }).error).to.include({ code: 'not_found', type: 'not_found_error' });
    } finally {
      server.close();
    }
  });
});
