import fs from 'node:fs';
import path from 'node:path';
import type { ChannelAuth, ChannelConfig } from './upstreams/channel';
import { CHANNEL_NAME_PATTERN } from './upstreams/channel-name';
import { PROTOCOLS } from './upstreams/protocols';
import type { S3StoreSettings } from './files/s3-store';

/** Where files live: DATA_DIR/files (the default), or an S3-compatible bucket. */
export type FileStoreConfig = { readonly kind: 'local' } | ({ readonly kind: 's3' } & S3StoreSettings);

/**
 * Every setting the gateway reads from its environment, in one place. Names are part of the
 * operator interface (README, docker-compose.yml): do not rename them.
 */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** Unset: an embedded PostgreSQL server is started under dataDir. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  /** Unset: generated at first start, kept in dataDir, printed once. */
  readonly adminToken: string | undefined;
  readonly eventStore: 'postgres' | 'eventstoredb';
  readonly esdbConnectionString: string | undefined;
  readonly logLevel: string;
  /** At shutdown, how long requests in flight may run on before their connections are closed (streams then settle what they delivered). */
  readonly shutdownGraceMs: number;
  /** Port of the embedded PostgreSQL server; 0 picks a free one. */
  readonly embeddedPgPort: number;
  /** When set, `GET /metrics` answers only `Authorization: Bearer <METRICS_TOKEN>`. */
  readonly metricsToken: string | undefined;
  /** How long a write waits for the read models it affects before answering. */
  readonly projectionWaitMs: number;
  /** How often the reconciler looks for reservations whose purpose died. */
  readonly reconcileIntervalMs: number;
  /** A task reservation whose task stream does not exist this long after reserving is released. */
  readonly orphanReservationGraceMs: number;
  /** How long a task creation holds its Idempotency-Key before another request may take it over (a holder that crashed). */
  readonly idempotencyLeaseMs: number;
  /** A reservation made for one synchronous request expires this long after it was made. */
  readonly requestReservationTtlMs: number;
  /**
   * How long past its expiry a request's reservation stays open for a settlement journaled while
   * the database was unreachable (src/billing/settlement-journal.ts); the reconciler releases it after.
   */
  readonly settlementJournalHorizonMs: number;
  /** How often a process retries the settlements it journaled. */
  readonly settlementJournalRetryMs: number;
  /** Fallback poll of the event log when no notification arrives. */
  readonly subscriptionPollMs: number;
  /**
   * How long the consumers let notified appends gather before reading them (PostgreSQL store).
   * With one client on 2 cores, 2 ms left each request's appends a pass of every consumer of its
   * own on the event loop the next request needs (docs/benchmarks.md).
   */
  readonly subscriptionBatchMs: number;
  /** Upstream provider endpoints; null: every model is served by the built-in simulator. */
  readonly channels: readonly ChannelConfig[] | null;
  /** Deadline of the built-in simulator channel (headers, and each gap in a stream). */
  readonly upstreamTimeoutMs: number;
  /** How a model's channels are failed over and paused (docs/operations.md, Routing). */
  readonly routing: {
    /** The cooldown of a channel that answered 429 without a Retry-After. */
    readonly cooldownMs: number;
    /** The longest cooldown a Retry-After may ask for. */
    readonly maxCooldownMs: number;
    /** Consecutive failures of a channel that open its circuit. */
    readonly failureThreshold: number;
    /** The first pause of an open circuit; each failed probe doubles it, up to maxOpenMs. */
    readonly openMs: number;
    readonly maxOpenMs: number;
  };
  /** The model catalog; unset: the built-in src/billing/catalog.json. */
  readonly catalogFile: string | undefined;
  /** Requests per minute one API key may make to the metered endpoints; 0 disables the limit. */
  readonly rateLimitPerMinute: number;
  /** The PostgreSQL database where every gateway process counts the per-key and polling limits together; unset: the gateway's own. */
  readonly limitsDatabaseUrl: string | undefined;
  /** How much of a limit's rate a process takes from the shared store at once: what refills in this many milliseconds; 0: every check asks the store. */
  readonly limitsLeaseMs: number;
  /** How long a call to the shared limit store may take before the process limits on its own. */
  readonly limitsStoreTimeoutMs: number;
  /** How often a process limiting on its own asks the shared store whether it answers again. */
  readonly limitsProbeMs: number;
  /** How long a web Q&A request over its key's rate waits for a turn before answering 502 `gateway_busy` (that endpoint has no 429). */
  readonly webQaRateWaitMs: number;
  /** How long the gateway keeps a web Q&A conversation it keeps itself (Ark's bots) after its last turn; then it is deleted. */
  readonly webQaHistoryTtlMs: number;
  /** Failed credentials (API keys, admin tokens) from one client address within authFailureWindowMs that lock it out; 0 disables. */
  readonly authFailureLimit: number;
  readonly authFailureWindowMs: number;
  /** How long a locked-out address is refused without its credential being checked. */
  readonly authLockoutMs: number;
  /** Entries of each kind (addresses, addresses' admin tokens, key prefixes) the lockout tracks at most (the least recent failure of the kind is forgotten first). */
  readonly authLockoutMaxAddresses: number;
  /** Proxies in front of the gateway that append to X-Forwarded-For; 0: the client address is the socket's. */
  readonly trustProxyHops: number;
  /** Interval of `: ping` comments on idle event streams. */
  readonly ssePingMs: number;
  /** The chat model that writes risk report summaries. */
  readonly riskWriterModel: string;
  /** The search model the risk agent queries. */
  readonly riskSearchModel: string;
  /** How many risk dimension searches of one request run at once. */
  readonly riskSearchConcurrency: number;
  /** How long a web-search answer is reused (not billed again) from the search cache. */
  readonly searchCacheTtlMs: number;
  /** Base URL clients reach this gateway at, for signed download links; unset: the listening URL. */
  readonly publicBaseUrl: string | undefined;
  /** Key of signed download links; unset: generated once and kept in DATA_DIR (share it between instances). */
  readonly urlSigningSecret: string | undefined;
  /** Key that encrypts provider credentials in the log (src/channels/credential-cipher.ts); unset: generated once and kept in DATA_DIR. */
  readonly channelSecretsKey: string | undefined;
  /** Earlier channel secrets keys, still read (never written) while a rotation of CHANNEL_SECRETS_KEY is under way. */
  readonly channelSecretsPreviousKeys: readonly string[];
  /** Delays before webhook attempts 2, 3 and 4. */
  readonly webhookRetryDelaysMs: readonly number[];
  /** A webhook attempt fails without a 2xx within this. */
  readonly webhookTimeoutMs: number;
  /** Allow callback URLs on loopback and private networks (tests, trusted networks only). */
  readonly webhookAllowPrivateTargets: boolean;
  /** First poll of an upstream task after it was accepted; later polls back off from it. */
  readonly taskPollMs: number;
  /** A task the upstream has not finished after this fails with `timeout` (and is released). */
  readonly taskTimeoutMs: number;
  /** When a provider could not take a task during its creation request, the background retry comes this much later. */
  readonly taskInlineSubmitGraceMs: number;
  /** Parallel job workers per gateway process. */
  readonly jobConcurrency: number;
  /** A claimed job not finished within this is claimed again by another worker. */
  readonly jobLeaseMs: number;
  /** Validity of signed links to archived videos. */
  readonly videoUrlTtlMs: number;
  /** Validity of signed links to generated images (sync, async and the gallery). */
  readonly imageUrlTtlMs: number;
  /** Validity of a podcast's signed `audio_url` (the spec: 1 hour). */
  readonly podcastUrlTtlMs: number;
  /** Validity of signed links to subtitle-erased videos. */
  readonly eraseUrlTtlMs: number;
  /** Minimum interval between two polls of one podcast task by one API key; faster is 429. 0 disables. */
  readonly pollMinIntervalMsPodcast: number;
  /** The same for subtitle erase tasks. */
  readonly pollMinIntervalMsErase: number;
  /** The same for async image tasks. */
  readonly pollMinIntervalMsImage: number;
  /** A service-minutes summary still unfinished this long after its transcription succeeded fails the task (summary_timeout). */
  readonly minutesSummaryTimeoutMs: number;
  /** Largest file POST /v1/files accepts (413 above). */
  readonly uploadMaxBytes: number;
  /** Validity of the signed links to uploaded files (what an upstream fetches a recording by). */
  readonly uploadUrlTtlMs: number;
  /** Let the minutes file-size probe (a HEAD on file_url, its redirects, or a ranged GET) reach loopback and private addresses, and subtitle erase take a video_url on such a host (tests, trusted networks only). */
  readonly fileUrlAllowPrivateTargets: boolean;
  /** FILE_STORE and, for `s3`, the S3_* settings. */
  readonly fileStore: FileStoreConfig;
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const eventStore = oneOf(env, 'EVENT_STORE', ['postgres', 'eventstoredb'] as const, 'postgres');
  const esdbConnectionString = nonEmpty(env.ESDB_CONNECTION_STRING);
  if (eventStore === 'eventstoredb' && !esdbConnectionString) {
    throw new ConfigError('EVENT_STORE=eventstoredb needs ESDB_CONNECTION_STRING');
  }
  if (nonEmpty(env.RISK_OFFICIAL_DOMAINS) !== undefined) {
    // Its meaning moved, so a deployment that set it must not start on a different list unawares.
    throw new ConfigError(
      "RISK_OFFICIAL_DOMAINS is no longer read: the risk screening's official domains are the catalog's risk-agent capabilities.official_sources, per search (docs/api/agents.md)",
    );
  }
  const config: Config = Object.freeze({
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: nonEmpty(env.HOST) ?? '0.0.0.0',
    databaseUrl: postgresUrl(env, 'DATABASE_URL'),
    dataDir: path.resolve(nonEmpty(env.DATA_DIR) ?? './data'),
    adminToken: nonEmpty(env.ADMIN_TOKEN),
    eventStore,
    esdbConnectionString,
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    embeddedPgPort: integer(env, 'EMBEDDED_PG_PORT', 0, 0, 65535),
    metricsToken: nonEmpty(env.METRICS_TOKEN),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 0),
    projectionWaitMs: integer(env, 'PROJECTION_WAIT_MS', 5000, 0),
    reconcileIntervalMs: integer(env, 'RECONCILE_INTERVAL_MS', 30_000, 10),
    orphanReservationGraceMs: integer(env, 'ORPHAN_RESERVATION_GRACE_MS', 60_000, 0),
    idempotencyLeaseMs: integer(env, 'IDEMPOTENCY_LEASE_MS', 10_000, 1000, 600_000),
    requestReservationTtlMs: integer(env, 'REQUEST_RESERVATION_TTL_MS', 3_600_000, 1000),
    settlementJournalHorizonMs: integer(env, 'SETTLEMENT_JOURNAL_HORIZON_MS', 3_600_000, 0),
    settlementJournalRetryMs: integer(env, 'SETTLEMENT_JOURNAL_RETRY_MS', 1000, 10),
    subscriptionPollMs: integer(env, 'SUBSCRIPTION_POLL_MS', 1000, 10),
    subscriptionBatchMs: integer(env, 'SUBSCRIPTION_BATCH_MS', 50, 0, 1000),
    channels: channels(env),
    upstreamTimeoutMs: integer(env, 'UPSTREAM_TIMEOUT_MS', 60_000, 10),
    routing: routing(env),
    catalogFile: readableFile(env, 'CATALOG_FILE'),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 0),
    limitsDatabaseUrl: postgresUrl(env, 'LIMITS_DATABASE_URL'),
    limitsLeaseMs: integer(env, 'LIMITS_LEASE_MS', 1_000, 0, 60_000),
    limitsStoreTimeoutMs: integer(env, 'LIMITS_STORE_TIMEOUT_MS', 1_000, 10, 60_000),
    limitsProbeMs: integer(env, 'LIMITS_PROBE_MS', 1_000, 10, 60_000),
    webQaRateWaitMs: integer(env, 'WEBQA_RATE_WAIT_MS', 2_000, 0, 30_000),
    webQaHistoryTtlMs: integer(env, 'WEBQA_HISTORY_TTL_MS', 7 * 86_400_000, 1000),
    authFailureLimit: integer(env, 'AUTH_FAILURE_LIMIT', 20, 0),
    authFailureWindowMs: integer(env, 'AUTH_FAILURE_WINDOW_MS', 60_000, 1),
    authLockoutMs: integer(env, 'AUTH_LOCKOUT_MS', 300_000, 1),
    authLockoutMaxAddresses: integer(env, 'AUTH_LOCKOUT_MAX_ADDRESSES', 10_000, 1),
    trustProxyHops: integer(env, 'TRUST_PROXY_HOPS', 0, 0, 16),
    ssePingMs: integer(env, 'SSE_PING_MS', 15_000, 10),
    riskWriterModel: nonEmpty(env.RISK_WRITER_MODEL) ?? 'chat-fast',
    riskSearchModel: nonEmpty(env.RISK_SEARCH_MODEL) ?? 'web-search',
    riskSearchConcurrency: integer(env, 'RISK_SEARCH_CONCURRENCY', 4, 1, 64),
    searchCacheTtlMs: integer(env, 'SEARCH_CACHE_TTL_MS', 86_400_000, 0),
    publicBaseUrl: httpUrl(env, 'PUBLIC_BASE_URL')?.replace(/\/$/, ''),
    urlSigningSecret: nonEmpty(env.URL_SIGNING_SECRET),
    channelSecretsKey: secretKey(env, 'CHANNEL_SECRETS_KEY'),
    channelSecretsPreviousKeys: secretKeyList(env, 'CHANNEL_SECRETS_PREVIOUS_KEYS'),
    webhookRetryDelaysMs: integerList(env, 'WEBHOOK_RETRY_DELAYS_MS', [5_000, 30_000, 300_000], 3),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 10),
    webhookAllowPrivateTargets: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    taskPollMs: integer(env, 'TASK_POLL_MS', 1_000, 5),
    taskTimeoutMs: integer(env, 'TASK_TIMEOUT_MS', 6 * 3_600_000, 1000),
    taskInlineSubmitGraceMs: integer(env, 'TASK_INLINE_SUBMIT_GRACE_MS', 30_000, 0),
    jobConcurrency: integer(env, 'JOB_CONCURRENCY', 8, 1, 256),
    jobLeaseMs: integer(env, 'JOB_LEASE_MS', 120_000, 1000),
    videoUrlTtlMs: integer(env, 'VIDEO_URL_TTL_MS', 24 * 3_600_000, 1000),
    imageUrlTtlMs: integer(env, 'IMAGE_URL_TTL_MS', 24 * 3_600_000, 1000),
    podcastUrlTtlMs: integer(env, 'PODCAST_URL_TTL_MS', 3_600_000, 1000),
    eraseUrlTtlMs: integer(env, 'ERASE_URL_TTL_MS', 24 * 3_600_000, 1000),
    pollMinIntervalMsPodcast: integer(env, 'POLL_MIN_INTERVAL_MS_PODCAST', 5_000, 0),
    pollMinIntervalMsErase: integer(env, 'POLL_MIN_INTERVAL_MS_ERASE', 1_000, 0),
    pollMinIntervalMsImage: integer(env, 'POLL_MIN_INTERVAL_MS_IMAGE', 1_000, 0),
    minutesSummaryTimeoutMs: integer(env, 'MINUTES_SUMMARY_TIMEOUT_MS', 1_800_000, 100),
    uploadMaxBytes: integer(env, 'UPLOAD_MAX_BYTES', 1_073_741_824, 1),
    uploadUrlTtlMs: integer(env, 'UPLOAD_URL_TTL_MS', 24 * 3_600_000, 1000),
    fileUrlAllowPrivateTargets: boolean(env, 'FILE_URL_ALLOW_PRIVATE_TARGETS', false),
    fileStore: fileStore(env),
  });
  checkJobLease(config);
  return config;
}

/**
 * The least JOB_LEASE_MS that is safe for a job whose side effect may take up to `deadlineMs`:
 * the deadline plus a margin (half of it, at least 500 ms) for what the job does around the
 * effect (loading the task, recording the outcome) on a busy machine.
 */
export function minimumJobLeaseMs(deadlineMs: number): number {
  return deadlineMs + Math.max(500, Math.ceil(deadlineMs / 2));
}

/**
 * A job whose lease runs out while it is still working is claimed again by another worker, which
 * repeats its side effect. Workers renew the lease of a running job (src/jobs/queue.ts), but a
 * renewal can fail (a database hiccup, a stalled event loop), and that must never let a webhook
 * attempt go out twice: a receiver that hangs until WEBHOOK_TIMEOUT_MS would be sent the same
 * attempt again. So the lease alone has to outlast the attempt's deadline (a whole-request
 * deadline, see src/webhooks/deliver.ts) by a margin.
 *
 * The other in-job waits are not bounded by configuration, so the lease is not sized by them:
 * upstream submissions and polls (UPSTREAM_TIMEOUT_MS or a channel's `timeout_ms`, a per-stall
 * deadline) are keyed by the task id and, but for one, read-only; the archive download (fixed
 * 30 s / 60 s per-stall timeouts in src/tasks/jobs.ts) writes the same key atomically and records
 * its outcome once. Their late outcomes are fenced by the lease. The exception is an async image
 * task's poll, which makes the provider's billable generation (src/media-tasks/images/kind.ts):
 * a generation that timed out or lost its connection fails the task rather than being made again,
 * but a lease lost while the call is still in flight (its renewal failing for longer than the
 * lease) lets another worker start a second one (docs/tasks.md).
 */
function checkJobLease(config: Config): void {
  const least = minimumJobLeaseMs(config.webhookTimeoutMs);
  if (config.jobLeaseMs < least) {
    throw new ConfigError(
      `JOB_LEASE_MS (${config.jobLeaseMs}) must exceed WEBHOOK_TIMEOUT_MS (${config.webhookTimeoutMs}) by a margin: at least ${least}. ` +
        'A webhook attempt still waiting for its receiver when its lease runs out would be claimed and sent again by another worker.',
    );
  }
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** CHANNELS (a JSON array) or CHANNELS_FILE (a path to one); the format is docs/configuration.md's. */
function channels(env: Env): ChannelConfig[] | null {
  const inline = nonEmpty(env.CHANNELS);
  const file = nonEmpty(env.CHANNELS_FILE);
  if (!inline && !file) return null;
  const source = inline ? 'CHANNELS' : `CHANNELS_FILE ${file}`;
  return parseChannels(inline ?? readSetting('CHANNELS_FILE', file!), source);
}

/**
 * A channels document (CHANNELS, CHANNELS_FILE, the fallback's deploy/channels.example.json): each
 * entry's name, protocol (default `openai`), base URL, one authentication (`api_key` for Bearer,
 * `headers`, `volcengine` signing or `alibaba` ACS3 signing) that its protocol accepts, deadline and concurrency.
 * Throws ConfigError naming the entry and field; never echoes a credential.
 */
export function parseChannels(text: string, source: string): ChannelConfig[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${source} is not valid JSON${jsonErrorPlace(text, err)}`);
  }
  return channelConfigs(parsed, source);
}

/**
 * Where a JSON document broke, as ` at line L, column C`, or nothing. Never the parser's message:
 * Node 20's quotes the text around the error (`Unexpected token 's', ..."api_key":sk-secr"...`),
 * which in a channels document may be part of a credential.
 */
function jsonErrorPlace(text: string, err: unknown): string {
  const position = /\bposition (\d+)\b/.exec(err instanceof Error ? err.message : '');
  if (!position) return '';
  const before = text.slice(0, Number(position[1]));
  const line = before.split('\n').length;
  return ` at line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
}

const CHANNEL_NAME = new RegExp(CHANNEL_NAME_PATTERN);

/** parseChannels of a document already parsed from JSON. */
export function channelConfigs(parsed: unknown, source: string): ChannelConfig[] {
  if (!Array.isArray(parsed) || parsed.length === 0) throw new ConfigError(`${source} must be a non-empty JSON array of channels`);
  const names = new Set<string>();
  return parsed.map((raw: unknown, i) => {
    if (!isObject(raw)) throw new ConfigError(`${source}[${i}] must be an object with name and base_url`);
    const c = raw;
    const where = `${source}[${i}]`;
    if (typeof c.name !== 'string' || c.name === '') throw new ConfigError(`${where}.name must be a non-empty string`);
    if (!CHANNEL_NAME.test(c.name)) throw new ConfigError(`${where}.name must be 1 to 64 letters, digits, dots, underscores and hyphens, starting with a letter or digit, and not start with health-`);
    if (names.has(c.name)) throw new ConfigError(`${where}.name: channel ${c.name} is listed twice`);
    names.add(c.name);
    const protocolName = c.protocol ?? 'openai';
    const protocol = typeof protocolName === 'string' ? PROTOCOLS.get(protocolName) : undefined;
    if (!protocol) throw new ConfigError(`${where}.protocol must be one of ${[...PROTOCOLS.keys()].join(', ')}`);
    if (typeof c.base_url !== 'string' || !isHttpUrl(c.base_url)) throw new ConfigError(`${where}.base_url must be an http(s) URL`);
    // The base URL is shown to operators and logged; credentials go where they are kept sealed.
    if (hasUserInfo(c.base_url)) throw new ConfigError(`${where}.base_url must not carry a user or password; give credentials as api_key, headers, volcengine or alibaba`);
    const auth = channelAuth(c, where);
    if (!protocol.auth.includes(auth.kind)) {
      throw new ConfigError(`${where}: a ${protocol.name} channel authenticates with ${protocol.auth.map(AUTH_FIELD).join(' or ')}, not ${AUTH_FIELD(auth.kind)}`);
    }
    const timeout = c.timeout_ms ?? 60_000;
    const concurrency = c.max_concurrency ?? 64;
    if (!Number.isSafeInteger(timeout) || (timeout as number) < 1) throw new ConfigError(`${where}.timeout_ms must be a positive integer`);
    if (!Number.isSafeInteger(concurrency) || (concurrency as number) < 1) throw new ConfigError(`${where}.max_concurrency must be a positive integer`);
    return { name: c.name, protocol: protocol.name, base_url: c.base_url, auth, timeout_ms: timeout as number, max_concurrency: concurrency as number };
  });
}

/** The channel field that selects each authentication strategy, for messages. */
const AUTH_FIELD = (kind: ChannelAuth['kind']): string =>
  ({ none: 'no credentials', bearer: 'api_key', headers: 'headers', volcengine: 'volcengine (request signing)', acs3: 'alibaba (ACS3 request signing)' })[kind];

const VOLCENGINE_FIELDS = ['access_key_id', 'secret_access_key', 'region', 'service'] as const;
const ALIBABA_FIELDS = ['access_key_id', 'access_key_secret'] as const;

/** The one authentication strategy an entry names: `api_key`, `headers`, `volcengine` or `alibaba`, or none. */
function channelAuth(c: Record<string, unknown>, where: string): ChannelAuth {
  const given = (['api_key', 'headers', 'volcengine', 'alibaba'] as const).filter((field) => c[field] !== undefined);
  if (given.length > 1) throw new ConfigError(`${where}: give one of api_key, headers, volcengine and alibaba, not ${given.join(' and ')}`);
  if (c.api_key !== undefined) {
    if (typeof c.api_key !== 'string') throw new ConfigError(`${where}.api_key must be a string`);
    return c.api_key === '' ? { kind: 'none' } : { kind: 'bearer', apiKey: c.api_key };
  }
  if (c.headers !== undefined) {
    const headers = c.headers;
    if (!isObject(headers) || Object.keys(headers).length === 0) throw new ConfigError(`${where}.headers must be an object of header names to string values`);
    for (const [name, value] of Object.entries(headers)) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new ConfigError(`${where}.headers: ${JSON.stringify(name)} is not a header name`);
      if (typeof value !== 'string' || !/^[\x20-\x7e]*$/.test(value)) throw new ConfigError(`${where}.headers.${name} must be a string of printable ASCII`);
    }
    return { kind: 'headers', headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v as string])) };
  }
  if (c.volcengine !== undefined) {
    const v = c.volcengine;
    if (!isObject(v)) throw new ConfigError(`${where}.volcengine must be an object with ${VOLCENGINE_FIELDS.join(', ')}`);
    for (const field of VOLCENGINE_FIELDS) {
      if (typeof v[field] !== 'string' || v[field] === '') throw new ConfigError(`${where}.volcengine.${field} must be a non-empty string`);
    }
    if (v.session_token !== undefined && typeof v.session_token !== 'string') throw new ConfigError(`${where}.volcengine.session_token must be a string`);
    const credentials = { accessKeyId: v.access_key_id as string, secretAccessKey: v.secret_access_key as string, region: v.region as string, service: v.service as string };
    return { kind: 'volcengine', credentials: typeof v.session_token === 'string' && v.session_token !== '' ? { ...credentials, sessionToken: v.session_token } : credentials };
  }
  if (c.alibaba !== undefined) {
    const a = c.alibaba;
    if (!isObject(a)) throw new ConfigError(`${where}.alibaba must be an object with ${ALIBABA_FIELDS.join(', ')}`);
    for (const field of ALIBABA_FIELDS) {
      if (typeof a[field] !== 'string' || a[field] === '') throw new ConfigError(`${where}.alibaba.${field} must be a non-empty string`);
    }
    return { kind: 'acs3', credentials: { accessKeyId: a.access_key_id as string, accessKeySecret: a.access_key_secret as string } };
  }
  return { kind: 'none' };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * FILE_STORE=local (the default) or s3 with S3_BUCKET and the optional S3_* settings. The keys go
 * in both or neither: neither leaves them to the AWS SDK's own chain (AWS_ACCESS_KEY_ID..., roles).
 * No message echoes a key.
 */
function fileStore(env: Env): FileStoreConfig {
  const kind = oneOf(env, 'FILE_STORE', ['local', 's3'] as const, 'local');
  const s3Names = ['S3_BUCKET', 'S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE', 'S3_KEY_PREFIX', 'S3_PART_BYTES'];
  if (kind === 'local') {
    const stray = s3Names.filter((name) => nonEmpty(env[name]) !== undefined);
    // Set without FILE_STORE=s3 they would be ignored, and files written to a disk the operator meant to leave.
    if (stray.length > 0) throw new ConfigError(`${stray.join(', ')} ${stray.length > 1 ? 'are' : 'is'} set but FILE_STORE is not s3`);
    return { kind };
  }
  const bucket = nonEmpty(env.S3_BUCKET);
  // The rules of S3 bucket names, which S3-compatible stores share.
  if (!bucket || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigError('FILE_STORE=s3 needs S3_BUCKET: 3 to 63 lower-case letters, digits, dots and hyphens');
  }
  const accessKeyId = nonEmpty(env.S3_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.S3_SECRET_ACCESS_KEY);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together: set both, or neither for the AWS SDK\'s own credentials');
  }
  const keyPrefix = nonEmpty(env.S3_KEY_PREFIX) ?? '';
  if (keyPrefix !== '' && !/^([A-Za-z0-9][A-Za-z0-9._-]*\/)+$/.test(keyPrefix.replace(/\/?$/, '/'))) {
    throw new ConfigError('S3_KEY_PREFIX must be path segments of letters, digits, ".", "_" and "-", such as gateway/prod');
  }
  return {
    kind,
    bucket,
    endpoint: httpUrl(env, 'S3_ENDPOINT'),
    region: nonEmpty(env.S3_REGION) ?? 'us-east-1',
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
    forcePathStyle: boolean(env, 'S3_FORCE_PATH_STYLE', false),
    keyPrefix: keyPrefix === '' ? '' : keyPrefix.replace(/\/?$/, '/'),
    // S3 refuses parts under 5 MiB (but the last) and allows 10,000 of them: 8 MiB parts reach 80 GB.
    partBytes: integer(env, 'S3_PART_BYTES', 8 * 1_048_576, 5 * 1_048_576, 512 * 1_048_576),
  };
}

/**
 * A PostgreSQL connection URL. Without this check a value like `notaurl` reached the driver,
 * which read it as a host name and failed with `getaddrinfo ENOTFOUND base`. The value is not
 * echoed: it usually carries a password.
 */
function postgresUrl(env: Env, name: string): string | undefined {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a URL: expected postgres://user:password@host:5432/database`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`${name} must start with postgres:// or postgresql://, got ${url.protocol}//…`);
  }
  return raw;
}

/** The least length of a channel secrets key: 32 characters of `openssl rand -base64 32` carry 192 bits. */
export const CHANNEL_SECRETS_KEY_MIN_LENGTH = 32;

/** A key of at least CHANNEL_SECRETS_KEY_MIN_LENGTH characters; the value is never echoed. */
function secretKey(env: Env, name: string): string | undefined {
  const raw = nonEmpty(env[name]);
  if (raw !== undefined && raw.length < CHANNEL_SECRETS_KEY_MIN_LENGTH) {
    throw new ConfigError(`${name} must be at least ${CHANNEL_SECRETS_KEY_MIN_LENGTH} characters (e.g. the output of openssl rand -base64 32)`);
  }
  return raw;
}

/** Comma-separated keys, each as secretKey checks it. */
function secretKeyList(env: Env, name: string): string[] {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return [];
  const keys = raw.split(',').map((k) => k.trim()).filter((k) => k !== '');
  keys.forEach((key, i) => secretKey({ [`${name}[${i}]`]: key }, `${name}[${i}]`));
  return keys;
}

function httpUrl(env: Env, name: string): string | undefined {
  const raw = nonEmpty(env[name]);
  if (raw !== undefined && !isHttpUrl(raw)) throw new ConfigError(`${name} must be an http(s) URL such as https://gateway.example.com, got "${raw}"`);
  return raw;
}

function hasUserInfo(value: string): boolean {
  const url = new URL(value);
  return url.username !== '' || url.password !== '';
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A setting naming a file: it must exist and be readable now, not fail later with a bare ENOENT. */
function readableFile(env: Env, name: string): string | undefined {
  const file = nonEmpty(env[name]);
  if (file !== undefined) readSetting(name, file);
  return file;
}

function readSetting(name: string, file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory, not a file' : (err as Error).message;
    throw new ConfigError(`${name} ${file} cannot be read: ${why}`);
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/**
 * The routing's pauses. Each is at least 1 ms, and a first pause no longer than its cap: a 0
 * cooldown would let a 429 cool nothing down, and a first pause past its cap would make the
 * "doubling" after a failed probe shorten it; settings that defeat themselves are refused.
 */
function routing(env: Env): Config['routing'] {
  const cooldownMs = integer(env, 'CHANNEL_COOLDOWN_MS', 30_000, 1);
  const maxCooldownMs = integer(env, 'CHANNEL_MAX_COOLDOWN_MS', 600_000, 1);
  const openMs = integer(env, 'CHANNEL_CIRCUIT_OPEN_MS', 30_000, 1);
  const maxOpenMs = integer(env, 'CHANNEL_CIRCUIT_MAX_OPEN_MS', 600_000, 1);
  if (cooldownMs > maxCooldownMs) throw new ConfigError(`CHANNEL_COOLDOWN_MS (${cooldownMs}) must not exceed CHANNEL_MAX_COOLDOWN_MS (${maxCooldownMs})`);
  if (openMs > maxOpenMs) throw new ConfigError(`CHANNEL_CIRCUIT_OPEN_MS (${openMs}) must not exceed CHANNEL_CIRCUIT_MAX_OPEN_MS (${maxOpenMs})`);
  return { cooldownMs, maxCooldownMs, failureThreshold: integer(env, 'CHANNEL_CIRCUIT_FAILURES', 5, 1), openMs, maxOpenMs };
}

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function integerList(env: Env, name: string, fallback: number[], length: number): number[] {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const values = raw.split(',').map((v) => Number(v.trim()));
  if (values.length !== length || values.some((v) => !Number.isSafeInteger(v) || v < 0)) {
    throw new ConfigError(`${name} must be ${length} comma-separated non-negative integers, got "${raw}"`);
  }
  return values;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}
