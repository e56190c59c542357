import { expect } from 'chai';
import type { RouteInfo } from '../../src/http/routing';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';

/** A request path for a route pattern: every `:param` filled with a plausible id. */
function concretePath(route: RouteInfo): string {
  return route.path.replace(/:[A-Za-z_]+/g, 'x1');
}

/** The path in other cases: all upper case, and each literal segment upper-cased on its own. */
function caseVariants(path: string): string[] {
  const segments = path.split('/');
  const variants = new Set<string>([path.toUpperCase()]);
  segments.forEach((segment, i) => {
    if (segment === '' || segment === 'x1' || segment.toUpperCase() === segment) return;
    const changed = [...segments];
    changed[i] = segment.toUpperCase();
    variants.add(changed.join('/'));
    changed[i] = segment[0]!.toUpperCase() + segment.slice(1);
    variants.add(changed.join('/'));
  });
  variants.delete(path);
  return [...variants];
}

/** Whether a concrete path is one a route pattern matches (`:param` takes any one segment). */
function matchesPattern(pattern: string, path: string): boolean {
  const want = pattern.split('/');
  const have = path.split('/');
  return want.length === have.length && want.every((segment, i) => (segment.startsWith(':') ? have[i] !== '' : segment === have[i]));
}

/**
 * What a path in another case must answer with valid credentials: 404, unless it happens to be a
 * path another route serves (`/v1/asset-groups/VALIDATE-SESSION` is a group id to
 * `GET /v1/asset-groups/:groupId`): then 405 when only other methods serve it.
 */
function expectedForVariant(routes: readonly RouteInfo[], method: string, variant: string): number {
  const serving = routes.filter((r) => matchesPattern(r.path, variant));
  return serving.length > 0 && !serving.some((r) => r.method === method) ? 405 : 404;
}

/** Whatever shape the endpoint group uses, an error body names its error. */
function expectErrorBody(body: unknown, what: string): void {
  expect(body, what).to.be.an('object');
  expect((body as { error?: unknown }).error, what).to.not.equal(undefined);
}

async function eventCount(gw: TestGateway): Promise<number> {
  const { rows } = await gw.pool.query<{ n: string }>('SELECT count(*) AS n FROM es_events');
  return Number(rows[0]!.n);
}

describe('routing: case-sensitive paths, per-route credentials, 404/405 in JSON @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ AUTH_FAILURE_LIMIT: '0' });
  });
  after(async () => gw.close());

  it('reads its routes from the routers, admin and /v1 alike', () => {
    const keys = gw.routes.map((r) => `${r.method} ${r.path} ${r.access}`);
    for (const expected of [
      'POST /admin/v1/accounts admin',
      'POST /admin/v1/accounts/:id/credits admin',
      'POST /admin/v1/catalog/reload admin',
      'GET /v1/account api_key',
      'POST /v1/chat/completions api_key',
      'GET /v1/audio/minutes/:id api_key',
      'POST /v1/agent/risk/chat/completions api_key',
      'GET /healthz public',
    ]) {
      expect(keys).to.include(expected);
    }
    for (const route of gw.routes) {
      expect(route.access === 'admin', `${route.method} ${route.path}`).to.equal(route.path.startsWith('/admin/'));
      if (route.path.startsWith('/v1/')) expect(route.access, `${route.method} ${route.path}`).to.equal('api_key');
    }
  });

  it('refuses every admin route without the token or with a wrong one, in any case of its path', async () => {
    const accountsBefore = await eventCount(gw);
    const admin = gw.routes.filter((r) => r.access === 'admin' && r.method !== 'HEAD');
    expect(admin.length).to.be.greaterThan(10);
    for (const route of admin) {
      const path = concretePath(route);
      for (const auth of [null, 'wrong-token', `${TEST_ADMIN_TOKEN}x`]) {
        const own = await gw.api(auth, route.method, path);
        expect([own.status, own.body?.error?.code], `${route.method} ${path} with ${auth}`).to.deep.equal([401, 'invalid_admin_token']);
        for (const variant of caseVariants(path)) {
          const res = await gw.api(auth, route.method, variant);
          const what = `${route.method} ${variant} with ${auth}: ${res.status} ${JSON.stringify(res.body)}`;
          expect([401, expectedForVariant(gw.routes, route.method, variant)], what).to.include(res.status);
          expectErrorBody(res.body, what);
        }
      }
    }
    expect(await eventCount(gw), 'nothing appended').to.equal(accountsBefore);
  });

  it('routes by exact case: with valid credentials, a path in another case is a 404 in JSON', async () => {
    const { key } = await gw.fundedAccount(0);
    const before = await eventCount(gw);
    for (const route of gw.routes.filter((r) => r.method !== 'HEAD')) {
      const credential = route.access === 'admin' ? TEST_ADMIN_TOKEN : route.access === 'api_key' ? key : null;
      for (const variant of caseVariants(concretePath(route))) {
        const res = await gw.api(credential, route.method, variant);
        const what = `${route.method} ${variant}: ${res.status} ${JSON.stringify(res.body)}`;
        expect(res.status, what).to.equal(expectedForVariant(gw.routes, route.method, variant));
        expectErrorBody(res.body, what);
      }
    }
    expect(await eventCount(gw), 'nothing appended').to.equal(before);
  });

  it('refuses every /v1 route without an API key, in any case of its path, and never with a 5xx', async () => {
    const v1 = gw.routes.filter((r) => r.access === 'api_key' && r.method !== 'HEAD');
    expect(v1.length).to.be.greaterThan(20);
    for (const route of v1) {
      const path = concretePath(route);
      for (const auth of [null, 'tr-not-a-key', TEST_ADMIN_TOKEN]) {
        const own = await gw.api(auth, route.method, path);
        expect(own.status, `${route.method} ${path} with ${auth}: ${JSON.stringify(own.body)}`).to.equal(401);
        expectErrorBody(own.body, `${route.method} ${path}`);
        for (const variant of caseVariants(path)) {
          const res = await gw.api(auth, route.method, variant);
          const what = `${route.method} ${variant} with ${auth}: ${res.status} ${JSON.stringify(res.body)}`;
          expect([401, expectedForVariant(gw.routes, route.method, variant)], what).to.include(res.status);
          expectErrorBody(res.body, what);
        }
      }
    }
  });

  it('answers the issue\'s cases: an upper-case admin path is 404 and appends nothing; /V1/account is 404, not 500', async () => {
    const before = await eventCount(gw);
    const created = await gw.api(null, 'POST', '/ADMIN/v1/accounts', { name: 'intruder' });
    expect([created.status, created.body.error.code]).to.deep.equal([404, 'not_found']);
    const v1 = await gw.api(null, 'GET', '/V1/account');
    expect([v1.status, v1.body.error.type]).to.deep.equal([404, 'not_found_error']);
    expect(await eventCount(gw)).to.equal(before);
    const health = await gw.api(null, 'GET', '/HEALTHZ');
    expect(health.status).to.equal(404);
  });

  it('answers 405 and 404 in the error shape of the endpoint group, keeping Allow', async () => {
    const { key } = await gw.fundedAccount(0);
    const chat = await gw.api(key, 'PUT', '/v1/chat/completions');
    expect(chat.status).to.equal(405);
    expect(chat.body.error).to.include({ code: 'method_not_allowed', type: 'invalid_request_error' });
    expect(chat.headers.get('allow')).to.include('POST');

    const minutes = await gw.api(key, 'DELETE', '/v1/audio/minutes/x1');
    expect(minutes.status).to.equal(405);
    expect(Object.keys(minutes.body).sort()).to.deep.equal(['error', 'type']);
    expect(minutes.body.error).to.be.a('string');

    const risk = await gw.api(key, 'GET', '/v1/agent/risk/chat/completions');
    expect(risk.status).to.equal(405);
    expect(risk.body.error).to.have.keys('message', 'code');
    expect(risk.body.request_id).to.be.a('string');

    const unknownMethod = await gw.api(key, 'PROPFIND', '/v1/models');
    expect([unknownMethod.status, unknownMethod.body.error.code]).to.deep.equal([405, 'method_not_allowed']);

    const minutesMissing = await gw.api(key, 'GET', '/v1/audio/minutes/x1/y');
    expect(minutesMissing.status).to.equal(404);
    expect(minutesMissing.body).to.have.keys('error', 'type');
    const missing = await gw.api(key, 'GET', '/v1/nothing-here');
    expect([missing.status, missing.body.error.code]).to.deep.equal([404, 'not_found']);
  });
});

describe('the text rule at the edge: no NUL, no lone surrogate @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  before(async () => {
    gw = await startTestGateway({ AUTH_FAILURE_LIMIT: '0' });
    ({ key, accountId } = await gw.fundedAccount(1_000_000));
  });
  after(async () => gw.close());

  /** Sends a body as written (JSON escapes included), so lone surrogates reach the gateway intact. */
  const raw = (auth: string | null, method: string, path: string, body: string) => gw.api(auth, method, path, body, { 'content-type': 'application/json' });

  it('refuses bad text in any body field or key with 400 naming it, before any money moves', async () => {
    const before = await eventCount(gw);
    const cases: [string, string, string | null, string, string][] = [
      ['POST', '/v1/images/generations', key, '{"model":"image-5.0","prompt":"a\\u0000b"}', 'prompt'],
      ['POST', '/v1/images/async', key, '{"model":"image-5.0","prompt":"a\\ud800b"}', 'prompt'],
      ['POST', '/v1/audio/podcasts', key, '{"model":"podcast-standard","topic":"\\udc00"}', 'topic'],
      ['POST', '/v1/videos/generations', key, '{"model":"video-2.5","content":[{"type":"text","text":"x\\u0000"}]}', 'content[0].text'],
      ['POST', '/v1/chat/completions', key, '{"model":"chat-fast","messages":[{"role":"user","content":"hi"}],"\\ud800":1}', '\uFFFD'],
      ['POST', '/v1/summaries', key, '{"task_id":"task\\u0000"}', 'task_id'],
      ['POST', '/v1/responses', key, '{"model":"chat-fast","input":[{"role":"user","content":"\\ud83d"}]}', 'input[0].content'],
      ['POST', '/v1/audio/minutes', key, '{"model":"service-minutes","file_url":"https://example.com/a.mp3","hot_words":["\\u0000"]}', 'hot_words[0]'],
      ['POST', '/v1/videos/erase-subtitle', key, '{"video_url":"https://example.com/v\\u0000.mp4"}', 'video_url'],
      ['POST', '/v1/agent/risk/chat/completions', key, '{"messages":[{"role":"user","content":"「青峦数据科技有限公司」\\u0000"}]}', 'messages[0].content'],
      ['POST', '/v1/agent/chat/completions', key, '{"bot_id":"webqa-basic","messages":[{"role":"user","content":"hi\\udfff"}]}', 'messages[0].content'],
      ['POST', '/admin/v1/accounts', TEST_ADMIN_TOKEN, '{"name":"bad\\u0000name"}', 'name'],
      ['POST', `/admin/v1/accounts/${accountId}/credits`, TEST_ADMIN_TOKEN, '{"amount":5,"reference":"r\\ud834"}', 'reference'],
      ['POST', `/admin/v1/accounts/${accountId}/refunds`, TEST_ADMIN_TOKEN, '{"reservation_id":"r\\u0000","amount":1,"reference":"x","reason":"y"}', 'reservation_id'],
      ['POST', `/admin/v1/accounts/${accountId}/keys`, TEST_ADMIN_TOKEN, '{"allowed_models":["chat-fast","\\u0000"]}', 'allowed_models[1]'],
    ];
    for (const [method, path, auth, body, field] of cases) {
      const res = await raw(auth, method, path, body);
      const what = `${method} ${path} ${body}: ${JSON.stringify(res.body)}`;
      expect(res.status, what).to.equal(400);
      const message = typeof res.body.error === 'string' ? res.body.error : res.body.error.message;
      expect(message, what).to.include(field);
      if (typeof res.body.error === 'object' && 'param' in res.body.error) expect(res.body.error.param, what).to.equal(field);
    }
    expect(await eventCount(gw), 'nothing appended').to.equal(before);
    expect(await gw.balance(key)).to.deep.include({ available: 1_000_000, frozen: 0 });
    await gw.expectAuditClean();
  });

  it('refuses bad text in a query parameter with 400, and a path id that cannot exist with 404', async () => {
    const query = await gw.api(key, 'GET', '/v1/gallery?limit=%00');
    expect([query.status, query.body.error.param]).to.deep.equal([400, 'limit']);
    const queryKey = await gw.api(key, 'GET', '/v1/account/ledger?a%00=1');
    expect([queryKey.status, queryKey.body.error.param]).to.deep.equal([400, 'a\uFFFD']);
    for (const path of ['/v1/images/async/%00', '/v1/audio/podcasts/a%00b', '/v1/videos/erase-subtitle/%00', '/v1/videos/generations/%00', '/v1/summaries/%00']) {
      const res = await gw.api(key, 'GET', path);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(404);
    }
    const minutes = await gw.api(key, 'GET', '/v1/audio/minutes/%00?x=%00');
    expect(minutes.status, 'a status endpoint stays within 401 and 404').to.equal(404);
    expect(minutes.body).to.have.keys('error', 'type');
    const cancel = await gw.api(key, 'POST', '/v1/audio/podcasts/%00/cancel');
    expect(cancel.status).to.equal(404);
    const adminAccount = await gw.admin('GET', '/admin/v1/accounts/%00');
    expect(adminAccount.status).to.equal(404);
  });

  it('refuses minutes file_url values that are not URLs with 400 in shape B, appending nothing', async () => {
    const before = await eventCount(gw);
    for (const url of ['http://127.0.0.1:99999/a.mp3', 'http://user@/a.mp3', 'http://[::1/a.mp3']) {
      const res = await gw.api(key, 'POST', '/v1/audio/minutes', { model: 'service-minutes', file_url: url });
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.type).to.equal('invalid_request_error');
    }
    expect(await eventCount(gw)).to.equal(before);
  });

  it('cuts a long upload filename between characters, never inside a surrogate pair', async () => {
    const name = `${'a'.repeat(254)}😀.mp3`;
    const form = new FormData();
    form.append('purpose', 'minutes');
    form.append('file', new Blob([Buffer.from('abc')], { type: 'audio/mpeg' }), name);
    const res = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const body = (await res.json()) as { filename: string };
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.filename).to.equal(`${'a'.repeat(254)}😀`);
  });

  it('answers a signed-file link with a malformed escape with 404 JSON, not 500', async () => {
    for (const path of ['/files/%ZZ?expires=1&sig=abc', '/files/a%00b?expires=1&sig=abc', '/files/%E0%A4%A?expires=1&sig=abc']) {
      const res = await gw.api(null, 'GET', path);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(404);
      expect(res.body.error.code).to.equal('file_not_found');
    }
  });
});
