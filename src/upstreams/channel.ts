import { randomBytes } from 'node:crypto';
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { signAcs3, type Acs3Credentials } from './auth/acs3-signature';
import { signVolcengine, type VolcengineCredentials } from './auth/volcengine-signature';
import { UpstreamError } from './errors';
import { openaiErrorOf } from './openai/errors';
import { openSocket } from './socket';
import { parseSse, type SseEvent } from './sse';
import type { WireAnswer, WireEventStream, WireEventTransport, WireMethod, WireRequest, WireSocketOpening, WireSocketRequest, WireSocketTransport } from './wire';

export { credentialRefusal, isCredentialRefusal, UpstreamError } from './errors';
export { streamedError } from './openai/errors';

/**
 * How a channel proves itself to its provider: a Bearer key (`api_key`), a fixed set of headers
 * (a provider's own key header), Volcengine's request signature, or Alibaba Cloud's (ACS3, the
 * channel field `alibaba`). Never logged (src/log.ts redacts `auth`) and never returned by an endpoint.
 */
export type ChannelAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'bearer'; readonly apiKey: string }
  | { readonly kind: 'headers'; readonly headers: Readonly<Record<string, string>> }
  | { readonly kind: 'volcengine'; readonly credentials: VolcengineCredentials }
  | { readonly kind: 'acs3'; readonly credentials: Acs3Credentials };

/**
 * A provider endpoint: the protocol it speaks (src/upstreams/protocols.ts), its base URL (e.g.
 * https://ark.cn-beijing.volces.com/api/v3), its authentication, a deadline and a concurrency
 * limit. Configured through CHANNELS (docs/configuration.md, docs/providers.md).
 */
export interface ChannelConfig {
  readonly name: string;
  readonly protocol: string;
  readonly base_url: string;
  readonly auth: ChannelAuth;
  /** Deadline for the response headers, and for each gap between body chunks (a stall). */
  readonly timeout_ms: number;
  /** Connections to the provider; requests beyond it wait in line. */
  readonly max_concurrency: number;
}

/** How an upstream call ended, for metrics: by status class, or why there was no answer. */
export type UpstreamOutcome = 'ok' | 'client_error' | 'server_error' | 'timeout' | 'network' | 'aborted';

/** Sees every call of a channel: the model asked for (`none` for calls without one), outcome, time to headers. */
export type UpstreamObserver = (channel: string, model: string, outcome: UpstreamOutcome, seconds: number) => void;

interface UpstreamResponse {
  readonly status: number;
  readonly headers: Dispatcher.ResponseData['headers'];
  readonly body: Dispatcher.ResponseData['body'];
}

/**
 * One keep-alive connection pool per channel (undici), with deadlines, streaming bodies and
 * aborts. Every request goes through one send path, which applies the channel's authentication:
 * `call` (any protocol's adapter: the whole answer, whatever its status), `openEvents` (a
 * streaming adapter: an event stream, or the whole answer of a refusal), and `json`/`stream`
 * (the OpenAI relay: an error status becomes the OpenAI protocol's error).
 */
export class Channel implements WireEventTransport, WireSocketTransport {
  private readonly pool: Pool;
  private readonly basePath: string;
  readonly origin: string;
  /** The Host the requests carry (`host[:port]`), which an ACS3 signature covers. */
  private readonly host: string;
  /** The channel's credential values, struck out of every refusal it relays (credentialValues). */
  private readonly secrets: readonly string[];

  constructor(
    readonly config: ChannelConfig,
    private readonly observe: UpstreamObserver = () => undefined,
    /** The signing clock (tests pin it). */
    private readonly now: () => Date = () => new Date(),
    /** A signature nonce, never the same twice (ACS3 refuses a repeated one; tests pin it). */
    private readonly nonce: () => string = () => randomBytes(16).toString('hex'),
  ) {
    const url = new URL(config.base_url);
    this.basePath = url.pathname.replace(/\/$/, '');
    this.origin = url.origin;
    this.host = url.host;
    this.secrets = credentialValues(config.auth);
    this.pool = new Pool(url.origin, {
      connections: config.max_concurrency,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: config.timeout_ms,
      bodyTimeout: config.timeout_ms,
    });
  }

  get name(): string {
    return this.config.name;
  }

  private async send(request: WireRequest, signal: AbortSignal | undefined, accept: string): Promise<UpstreamResponse> {
    const started = performance.now();
    const model = request.model ?? modelOf(request.body);
    const observe = (outcome: UpstreamOutcome) => this.observe(this.config.name, model, outcome, (performance.now() - started) / 1000);
    // Written before the call: a body that cannot be written is the gateway's fault, not the provider's.
    const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
    const pathname = this.basePath + request.path || '/';
    const query = request.query ?? {};
    const headers = {
      accept,
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      ...request.headers,
    };
    try {
      const res = await this.pool.request({
        method: request.method,
        path: pathname + queryString(query),
        headers: { ...headers, ...this.authHeaders(request.method, pathname, query, headers, payload) },
        body: payload,
        signal,
      });
      observe(res.statusCode >= 500 ? 'server_error' : res.statusCode >= 400 ? 'client_error' : 'ok');
      return { status: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      const failure = toUpstreamError(err, this.config.name);
      observe(failure instanceof UpstreamError ? (failure.kind === 'timeout' ? 'timeout' : 'network') : 'aborted');
      throw failure;
    }
  }

  /** The headers the channel's authentication strategy adds to one request. */
  private authHeaders(method: WireMethod, pathname: string, query: Readonly<Record<string, string>>, headers: Readonly<Record<string, string>>, body: string | undefined): Record<string, string> {
    const auth = this.config.auth;
    switch (auth.kind) {
      case 'none':
        return {};
      case 'bearer':
        return { authorization: `Bearer ${auth.apiKey}` };
      case 'headers':
        return { ...auth.headers };
      case 'volcengine':
        return signVolcengine({ method, pathname, query, headers, ...(body === undefined ? {} : { body }) }, auth.credentials, this.now());
      case 'acs3': {
        // Sent as signed: undici takes an explicit host header for the one it would write.
        const signed = { ...headers, host: this.host };
        return { host: this.host, ...signAcs3({ method, pathname, query, headers: signed, ...(body === undefined ? {} : { body }) }, auth.credentials, this.now(), this.nonce()) };
      }
    }
  }

  /**
   * A provider's whole answer, whatever its status, the body read whole (JSON, empty or binary):
   * the protocol's adapter reads it, and turns an error status into the gateway's error (its `errorOf`).
   */
  async call(request: WireRequest, signal?: AbortSignal): Promise<WireAnswer> {
    const res = await this.send(request, signal, request.headers?.accept ?? 'application/json');
    return answerOf(res.status, res.headers, { bytes: await readBytes(res.body, this.config.name) }, this.config.name, this.secrets);
  }

  /**
   * A JSON answer of the OpenAI relay; an HTTP error status becomes an UpstreamError carrying the
   * provider's message. The body is read as text, not as bytes first: every chat completion comes
   * this way, and the copy of its chunks into one buffer and a decoder of its own were a tenth of
   * the CPU issue 41's transport added to a chat request.
   */
  async json<T>(method: WireMethod, path: string, body?: unknown, signal?: AbortSignal, headers?: Record<string, string>): Promise<T> {
    const res = await this.send({ method, path, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) }, signal, 'application/json');
    const answer = answerOf(res.status, res.headers, { text: await readText(res.body, this.config.name) }, this.config.name, this.secrets);
    if (answer.status >= 400) throw openaiErrorOf(answer, this.config.name);
    return answer.json() as T;
  }

  /**
   * A request whose success is an event stream: the answer's status and headers, its body read
   * once by the protocol's adapter, as events or whole (an error answer). A broken or stalled body
   * throws the transport's UpstreamError from the events; the body is freed when they end.
   */
  async openEvents(request: WireRequest, signal?: AbortSignal): Promise<WireEventStream> {
    const res = await this.send(request, signal, 'text/event-stream');
    const name = this.config.name;
    const secrets = this.secrets;
    let taken = false;
    const take = (): void => {
      if (taken) throw new Error(`the body of channel ${name}'s answer was already read`);
      taken = true;
    };
    return {
      status: res.status,
      headers: headersOf(res.headers),
      events: () => {
        take();
        return (async function* events() {
          try {
            yield* parseSse(res.body);
          } catch (err) {
            throw toUpstreamError(err, name);
          } finally {
            res.body.destroy();
          }
        })();
      },
      whole: async () => {
        take();
        return answerOf(res.status, res.headers, { text: await readText(res.body, name) }, name, secrets);
      },
    };
  }

  /** An event stream of the OpenAI relay; the HTTP error status of a refused stream becomes an UpstreamError before any event. */
  async stream(path: string, body: unknown, signal?: AbortSignal): Promise<AsyncGenerator<SseEvent>> {
    const opened = await this.openEvents({ method: 'POST', path, body }, signal);
    if (opened.status >= 400) throw openaiErrorOf(await opened.whole(), this.config.name);
    return opened.events();
  }

  /**
   * A WebSocket to the provider (a protocol whose API is one): the base URL's host and path with
   * the scheme `wss` (`ws` for an `http` base URL), the channel's authentication in the handshake,
   * `timeout_ms` as the deadline of the handshake and of each wait for a message. A refused
   * upgrade comes back as the provider's answer, for the protocol's `errorOf`.
   */
  async open(request: WireSocketRequest, signal?: AbortSignal): Promise<WireSocketOpening> {
    const started = performance.now();
    const observe = (outcome: UpstreamOutcome) => this.observe(this.config.name, request.model ?? 'none', outcome, (performance.now() - started) / 1000);
    const base = new URL(this.config.base_url);
    const pathname = this.basePath + request.path || '/';
    const headers = { ...request.headers };
    try {
      const opened = await openSocket(
        `${base.protocol === 'https:' ? 'wss:' : 'ws:'}//${base.host}${pathname}`,
        { ...headers, ...this.authHeaders('GET', pathname, {}, headers, undefined) },
        this.config.timeout_ms,
        this.config.name,
        signal,
      );
      if ('socket' in opened) {
        observe('ok');
        return opened;
      }
      const { status, headers: raw, body } = opened.refusal;
      observe(status >= 500 ? 'server_error' : 'client_error');
      return { refusal: answerOf(status, raw, { bytes: body }, this.config.name, this.secrets) };
    } catch (err) {
      const failure = toUpstreamError(err, this.config.name);
      observe(failure instanceof UpstreamError ? (failure.kind === 'timeout' ? 'timeout' : 'network') : 'aborted');
      throw failure;
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** `?k=v&…` in the order given (RFC 3986 escaped), or nothing. */
function queryString(query: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(query).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}

function modelOf(body: unknown): string {
  const model = body && typeof body === 'object' ? (body as { model?: unknown }).model : undefined;
  return typeof model === 'string' ? model : 'none';
}

/** The whole body as bytes (a character split between two chunks is decoded whole later). */
async function readBytes(body: UpstreamResponse['body'], channel: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await body.arrayBuffer());
  } catch (err) {
    throw toUpstreamError(err, channel);
  }
}

/** The whole body as UTF-8 text, decoded at once (a character split between two chunks stays whole). */
async function readText(body: UpstreamResponse['body'], channel: string): Promise<string> {
  try {
    return await body.text();
  } catch (err) {
    throw toUpstreamError(err, channel);
  }
}

/** Headers lower-cased (undici's already are), a repeated one's values joined with `, `. */
function headersOf(raw: UpstreamResponse['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

const UTF8 = new TextDecoder();
const ENCODER = new TextEncoder();

/**
 * A WireAnswer over a body read whole, as bytes or as text (each made from the other when asked);
 * headers lower-cased (undici's already are), repeated ones joined. A refusal (4xx, 5xx) has the
 * channel's credentials struck out before anyone reads it: adapters relay a provider's message to
 * the client and the log, and providers quote the key they refused (OpenAI quotes part of it; a
 * misconfigured proxy may echo the whole Authorization header).
 */
function answerOf(status: number, raw: UpstreamResponse['headers'], body: { bytes?: Uint8Array; text?: string }, channel: string, secrets: readonly string[]): WireAnswer {
  const headers = headersOf(raw);
  let { bytes, text } = body;
  if (status >= 400 && secrets.length > 0) {
    const whole = text ?? UTF8.decode(bytes);
    const struck = withoutSecrets(whole, secrets);
    if (struck !== whole) {
      text = struck;
      bytes = undefined;
    }
  }
  const decoded = () => (text ??= UTF8.decode(bytes));
  return {
    status,
    headers,
    bytes: () => (bytes ??= ENCODER.encode(text)),
    text: decoded,
    json: () => {
      try {
        return JSON.parse(decoded()) as unknown;
      } catch {
        throw new UpstreamError(502, `channel ${channel} answered with invalid JSON`, null, 'protocol');
      }
    },
  };
}

/** What stands in a relayed refusal where the channel's credential stood. */
export const REDACTED_CREDENTIAL = '[credential redacted]';

/**
 * The values of a channel's credentials to strike out of a provider's text: secrets and key ids,
 * whole. Values under 8 characters are not secrets worth the name and would strike ordinary words.
 */
function credentialValues(auth: ChannelAuth): string[] {
  const values = ((): (string | undefined)[] => {
    switch (auth.kind) {
      case 'none':
        return [];
      case 'bearer':
        return [auth.apiKey];
      case 'headers':
        return Object.values(auth.headers);
      case 'volcengine':
        return [auth.credentials.accessKeyId, auth.credentials.secretAccessKey, auth.credentials.sessionToken];
      case 'acs3':
        return [auth.credentials.accessKeyId, auth.credentials.accessKeySecret];
    }
  })();
  // Longest first: a value containing another is struck whole.
  return [...new Set(values.filter((v): v is string => v !== undefined && v.length >= MIN_STRUCK_LENGTH))].sort((a, b) => b.length - a.length);
}

const MIN_STRUCK_LENGTH = 8;

function withoutSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED_CREDENTIAL);
  return out;
}

/** Errors raised before a connection existed: nothing of the request was written. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

function isConnectFailure(err: unknown): boolean {
  if (err instanceof undiciErrors.ConnectTimeoutError) return true;
  const { code, syscall } = err as { code?: unknown; syscall?: unknown };
  return (typeof code === 'string' && CONNECT_CODES.has(code)) || syscall === 'connect' || syscall === 'getaddrinfo';
}

function toUpstreamError(err: unknown, channel: string): unknown {
  if (err instanceof UpstreamError) return err;
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new UpstreamError(0, `channel ${channel} timed out`, 'upstream_timeout', 'timeout');
  }
  if ((err as { name?: string }).name === 'AbortError' || err instanceof undiciErrors.RequestAbortedError) return err;
  const kind = isConnectFailure(err) ? 'connect' : 'network';
  return new UpstreamError(0, `channel ${channel} is unreachable: ${(err as Error).message}`, 'upstream_unreachable', kind);
}
