import { TEST_ADMIN_TOKEN } from '../support/gateway';

/**
 * What the fuzz suite drives: every POST and PATCH route the gateway registers, with the statuses
 * its error answers may have, the error shape they must be in, and a valid body to start bad ones
 * from. A test fails when a registered POST or PATCH route has no entry here (or an entry names
 * a route that no longer exists), so a new endpoint cannot be left out.
 */

/** The documented error body of an endpoint group (interface spec, Errors). */
export type ErrorShape = 'openai' | 'risk' | 'minutes';

/**
 * The error statuses per endpoint group. The spec's lists are binding where the spec has one
 * (interface-spec.md, Errors: "Statuses listed per endpoint"); after the hardening issue (10, §5)
 * a body over a limit or of the wrong content type is 400 `payload_too_large` /
 * `unsupported_media_type` on those endpoints, except video creation which keeps 413; after the
 * conformance issue (11, §2) an unknown or not-allowed model is 400 there too. Endpoints the spec
 * names without a shape, and the gateway's own (admin, files, cancel, summaries), follow the
 * lists the README documents for them.
 */
export const ERROR_STATUSES = {
  /** spec: video create, minutes create, chat, responses, image generation. */
  specCreate: [400, 401, 402, 429, 502],
  /** spec: video create also answers 413 `payload_too_large` for a body over 5 MB. */
  specVideoCreate: [400, 401, 402, 413, 429, 502],
  /** spec: web Q&A. */
  specWebQa: [400, 401, 402, 502],
  /**
   * Risk: the spec gives shape A but no list; the README's: 403 `model_not_allowed` for a
   * restricted key stays (the conformance issue binds only the listed groups). Its 503 needs a
   * catalog without the configured models, which the fuzz never has.
   */
  risk: [400, 401, 402, 403, 429, 502],
  /** Named by the spec without a shape (async images, podcasts, erase): as the spec's creates. */
  namedCreate: [400, 401, 402, 429, 502],
  /** README: POST /v1/summaries (shape B): validation, balance, unknown task, rate limit, provider. */
  summaries: [400, 401, 402, 404, 429, 502],
  /** README: POST …/{taskId}/cancel and …/webhook/redeliver: a body 400, unknown task 404, finished 409. */
  taskAction: [400, 401, 404, 409, 429],
  /** README, real-person assets: bad body 400, fee 402, unknown group 404, provider 502. */
  assetSession: [400, 401, 402, 404, 429, 502],
  /** README, real-person assets: bad body 400, unknown group 404, group not verified 409. */
  assetImage: [400, 401, 404, 409, 429, 502],
  /** README, Files: 400, 401, 404, 413, 415 (not multipart). */
  files: [400, 401, 404, 413, 415],
  /** README, the admin API: validation 400, 401, unknown account or reservation 404, conflicts 409. */
  admin: [400, 401, 404, 409],
  /** README, the owner's keys: validation 400, a key wider than the calling one 403, unknown key 404, rate 429. */
  ownerKeys: [400, 401, 403, 404, 429],
  /** README, account settings: validation 400, rate 429. */
  accountSettings: [400, 401, 429],
  /** Body-less actions (webhook secret rotation, catalog reload): a body 400 `unexpected_body`, authentication. */
  bodiless: [400, 401],
  /** POST /admin/v1/audit: body-less; 409 `audit_running` while an audit runs. */
  audit: [400, 401, 409],
  /** docs/dashboard.md: sign-in with a bad body 400, a wrong secret 401, a locked-out address 429. */
  dashboardSession: [400, 401, 429],
} as const satisfies Record<string, readonly number[]>;

/** What a case may use to build paths and bodies: the live gateway's account and simulator. */
export interface FuzzEnv {
  readonly accountId: string;
  readonly simulatorUrl: string;
}

export interface FuzzTarget {
  readonly method: 'POST' | 'PATCH';
  /** The route's pattern exactly as its router registered it. */
  readonly route: string;
  readonly auth: 'admin' | 'key';
  readonly statuses: readonly number[];
  readonly shape: ErrorShape;
  /** `json` bodies are read with a byte limit; `multipart` is the upload; `none` takes nothing but `{}`. */
  readonly body: { kind: 'json'; limit: number; base: (env: FuzzEnv) => Record<string, unknown> } | { kind: 'multipart' } | { kind: 'none' };
  /** A value for each path parameter, from the live gateway. */
  readonly params?: (env: FuzzEnv) => Record<string, string>;
  /** A success leaves nothing running: what it does to the account is done when it answers. */
  readonly quiet?: boolean;
  /** The credential is a member of the body (dashboard sign-in): a mutated body may fairly be a 401. */
  readonly credentialInBody?: boolean;
}

const MiB = 1024 * 1024;
const JSON_LIMIT = MiB;
const VIDEO_LIMIT = 5 * MiB;

const simMedia = (env: FuzzEnv, name: string) => `${env.simulatorUrl}/sim/media/${name}?sim_duration_ms=60000`;
const account = (env: FuzzEnv) => ({ id: env.accountId });
const missingTask = (prefix: string) => () => ({ taskId: `${prefix}_fuzz0000000000000000`, id: `${prefix}_fuzz0000000000000000` });
const userSays = (content: string) => [{ role: 'user', content }];

function json(limit: number, base: (env: FuzzEnv) => Record<string, unknown>): FuzzTarget['body'] {
  return { kind: 'json', limit, base };
}

const S = ERROR_STATUSES;
export const FUZZ_TARGETS: readonly FuzzTarget[] = [
  // The spec's groups.
  { method: 'POST', route: '/v1/chat/completions', auth: 'key', statuses: S.specCreate, shape: 'openai', body: json(JSON_LIMIT, () => ({ model: 'chat-fast', messages: userSays('hello'), max_tokens: 16, temperature: 1, top_p: 1 })) },
  { method: 'POST', route: '/v1/responses', auth: 'key', statuses: S.specCreate, shape: 'openai', body: json(JSON_LIMIT, () => ({ model: 'chat-fast', input: 'hello', max_output_tokens: 16 })) },
  { method: 'POST', route: '/v1/images/generations', auth: 'key', statuses: S.specCreate, shape: 'openai', body: json(JSON_LIMIT, () => ({ model: 'image-5.0', prompt: 'a lighthouse', n: 1, size: '2048x2048', response_format: 'url', output_format: 'png' })) },
  {
    method: 'POST',
    route: '/v1/videos/generations',
    auth: 'key',
    statuses: S.specVideoCreate,
    shape: 'openai',
    // A first frame, so that the fuzz's URL mutations (address spellings among them) reach a media URL.
    body: json(VIDEO_LIMIT, () => ({
      model: 'video-2.5',
      content: [{ type: 'text', text: 'a lighthouse at dusk' }, { type: 'image_url', image_url: { url: 'https://images.example.com/first.png' }, role: 'first_frame' }],
      resolution: '720p',
      duration: 5,
      ratio: '16:9',
      seed: 7,
    })),
  },
  { method: 'POST', route: '/v1/audio/minutes', auth: 'key', statuses: S.specCreate, shape: 'minutes', body: json(JSON_LIMIT, (env) => ({ model: 'service-minutes', file_url: simMedia(env, 'sync.mp3'), recorded_at: '2026-11-24T09:00:00+08:00', timezone: 'Asia/Shanghai', number_of_speakers: 2, features: { summary: true } })) },
  ...['/v1/agent/chat/completions', '/v1/agent/chat/completion', '/v1/agents/chat/completions'].map(
    (route): FuzzTarget => ({ method: 'POST', route, auth: 'key', statuses: S.specWebQa, shape: 'openai', body: json(JSON_LIMIT, () => ({ bot_id: 'webqa-basic', messages: userSays('hello'), stream: false })) }),
  ),
  ...['/v1/agent/risk/chat/completions', '/v1/agent/risk/chat/completion'].map(
    (route): FuzzTarget => ({ method: 'POST', route, auth: 'key', statuses: S.risk, shape: 'risk', body: json(JSON_LIMIT, () => ({ messages: userSays('青峦数据科技有限公司'), identify: true, stream: false })) }),
  ),
  // Named by the spec without a shape.
  { method: 'POST', route: '/v1/images/async', auth: 'key', statuses: S.namedCreate, shape: 'openai', body: json(JSON_LIMIT, () => ({ model: 'image-5.0', prompt: 'a lighthouse', n: 1, size: '2048x2048' })) },
  { method: 'POST', route: '/v1/audio/podcasts', auth: 'key', statuses: S.namedCreate, shape: 'openai', body: json(JSON_LIMIT, () => ({ model: 'podcast-standard', topic: 'lighthouses', language: 'zh_cn', max_duration_seconds: 60 })) },
  { method: 'POST', route: '/v1/videos/erase-subtitle', auth: 'key', statuses: S.namedCreate, shape: 'openai', body: json(JSON_LIMIT, (env) => ({ video_url: simMedia(env, 'clip.mp4'), duration_seconds: 10, regions: [{ x: 0, y: 0.8, width: 1, height: 0.2 }] })) },
  { method: 'POST', route: '/v1/summaries', auth: 'key', statuses: S.summaries, shape: 'minutes', body: json(JSON_LIMIT, () => ({ task_id: 'mins_fuzz0000000000000000' })) },
  { method: 'POST', route: '/v1/asset-groups/validate-session', auth: 'key', statuses: S.assetSession, shape: 'openai', body: json(JSON_LIMIT, () => ({ name: 'fuzz group' })) },
  {
    method: 'POST',
    route: '/v1/asset-groups/:groupId/assets',
    auth: 'key',
    statuses: S.assetImage,
    shape: 'openai',
    body: json(JSON_LIMIT, () => ({ url: 'https://assets.example.com/person.png' })),
    params: () => ({ groupId: 'grp_fuzz0000000000000000' }),
    quiet: true,
  },
  { method: 'POST', route: '/v1/files', auth: 'key', statuses: S.files, shape: 'openai', body: { kind: 'multipart' } },
  // Task actions (no body).
  { method: 'POST', route: '/v1/audio/podcasts/:taskId/cancel', auth: 'key', statuses: S.taskAction, shape: 'openai', body: { kind: 'none' }, params: missingTask('pod') },
  { method: 'POST', route: '/v1/videos/erase-subtitle/:taskId/cancel', auth: 'key', statuses: S.taskAction, shape: 'openai', body: { kind: 'none' }, params: missingTask('erase') },
  { method: 'POST', route: '/v1/videos/generations/:id/webhook/redeliver', auth: 'key', statuses: S.taskAction, shape: 'openai', body: { kind: 'none' }, params: missingTask('vid') },
  { method: 'POST', route: '/v1/account/keys', auth: 'key', statuses: S.ownerKeys, shape: 'openai', body: json(JSON_LIMIT, () => ({ name: 'fuzz key', allowed_models: ['chat-fast'], budget: { amount: 1000, period: 'day' } })), quiet: true },
  {
    method: 'PATCH',
    route: '/v1/account/keys/:keyId',
    auth: 'key',
    statuses: S.ownerKeys,
    shape: 'openai',
    body: json(JSON_LIMIT, () => ({ rate_limit_per_minute: 10 })),
    params: () => ({ keyId: 'key_fuzz0000000000000000' }),
    quiet: true,
  },
  // A key's new secret (no body); the fuzz's key id names no key, so nothing is regenerated.
  { method: 'POST', route: '/v1/account/keys/:keyId/regenerate', auth: 'key', statuses: S.ownerKeys, shape: 'openai', body: { kind: 'none' }, params: () => ({ keyId: 'key_fuzz0000000000000000' }), quiet: true },
  { method: 'PATCH', route: '/v1/account/settings', auth: 'key', statuses: S.accountSettings, shape: 'openai', body: json(JSON_LIMIT, () => ({ timezone: 'Asia/Shanghai', default_video_url_mode: 'auto' })), quiet: true },
  { method: 'POST', route: '/v1/account/webhook-secret', auth: 'key', statuses: S.bodiless, shape: 'openai', body: { kind: 'none' } , quiet: true },
  // The admin API.
  { method: 'POST', route: '/admin/v1/accounts', auth: 'admin', statuses: S.admin, shape: 'openai', body: json(JSON_LIMIT, () => ({ name: 'fuzz account' })) , quiet: true },
  { method: 'PATCH', route: '/admin/v1/accounts/:id', auth: 'admin', statuses: S.admin, shape: 'openai', body: json(JSON_LIMIT, () => ({ default_video_url_mode: 'auto' })), params: account , quiet: true },
  { method: 'POST', route: '/admin/v1/accounts/:id/credits', auth: 'admin', statuses: S.admin, shape: 'openai', body: json(JSON_LIMIT, () => ({ amount: 1, reference: 'fuzz-credit', note: 'fuzz' })), params: account , quiet: true },
  {
    method: 'POST',
    route: '/admin/v1/accounts/:id/refunds',
    auth: 'admin',
    statuses: S.admin,
    shape: 'openai',
    body: json(JSON_LIMIT, () => ({ reservation_id: 'res_fuzz0000000000000000', amount: 1, reference: 'fuzz-refund', reason: 'fuzz' })),
    params: account,
    quiet: true,
  },
  { method: 'POST', route: '/admin/v1/accounts/:id/keys', auth: 'admin', statuses: S.admin, shape: 'openai', body: json(JSON_LIMIT, () => ({ name: 'fuzz key', allowed_models: ['chat-fast'] })), params: account , quiet: true },
  {
    method: 'PATCH',
    route: '/admin/v1/keys/:keyId',
    auth: 'admin',
    statuses: S.admin,
    shape: 'openai',
    body: json(JSON_LIMIT, () => ({ name: 'renamed', expires_at: '2030-01-01T00:00:00Z' })),
    params: () => ({ keyId: 'key_fuzz0000000000000000' }),
    quiet: true,
  },
  {
    method: 'POST',
    route: '/admin/v1/accounts/:id/keys/:keyId/regenerate',
    auth: 'admin',
    statuses: S.admin,
    shape: 'openai',
    body: { kind: 'none' },
    params: (env) => ({ id: env.accountId, keyId: 'key_fuzz0000000000000000' }),
    quiet: true,
  },
  { method: 'POST', route: '/admin/v1/accounts/:id/webhook-secret', auth: 'admin', statuses: S.admin, shape: 'openai', body: { kind: 'none' }, params: account , quiet: true },
  // The audit a success starts only reads (the log and the read models): quiet for the money checks.
  { method: 'POST', route: '/admin/v1/audit', auth: 'admin', statuses: S.audit, shape: 'openai', body: { kind: 'none' }, quiet: true },
  // Channels at run time: a valid create adds a channel no model names (so no call ever reaches it).
  { method: 'POST', route: '/admin/v1/channels', auth: 'admin', statuses: S.admin, shape: 'openai', body: json(JSON_LIMIT, (env) => ({ name: 'fuzz-channel', base_url: `${env.simulatorUrl}/v1`, api_key: 'sk-fuzz-placeholder-key', timeout_ms: 1000 })), quiet: true },
  { method: 'POST', route: '/admin/v1/channels/re-encrypt', auth: 'admin', statuses: S.admin, shape: 'openai', body: { kind: 'none' }, quiet: true },
  { method: 'PATCH', route: '/admin/v1/channels/:id', auth: 'admin', statuses: S.admin, shape: 'openai', body: json(JSON_LIMIT, () => ({ enabled: false, timeout_ms: 2000 })), params: () => ({ id: 'fuzz-missing-channel' }), quiet: true },
  { method: 'POST', route: '/admin/v1/channels/:id/test', auth: 'admin', statuses: S.admin, shape: 'openai', body: { kind: 'none' }, params: () => ({ id: 'fuzz-missing-channel' }), quiet: true },
  { method: 'POST', route: '/admin/v1/catalog/reload', auth: 'admin', statuses: S.bodiless, shape: 'openai', body: { kind: 'none' } , quiet: true },
  // The secret travels in the body (the Bearer header is ignored); the fuzz gateway's lockout is off, so wrong secrets stay 401.
  { method: 'POST', route: '/dashboard/api/session', auth: 'admin', statuses: S.dashboardSession, shape: 'openai', body: json(JSON_LIMIT, () => ({ secret: TEST_ADMIN_TOKEN })), quiet: true, credentialInBody: true },
];

export const targetKey = (method: string, route: string) => `${method} ${route}`;
