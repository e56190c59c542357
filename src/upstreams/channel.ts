import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { parseSse, type SseEvent } from './sse';

/**
 * A provider endpoint: an OpenAI-compatible base URL (e.g. https://api.example.com/v1), its key,
 * a deadline and a concurrency limit. Configured through CHANNELS (see README).
 */
export interface ChannelConfig {
  readonly name: string;
  readonly base_url: string;
  readonly api_key?: string;
  /** Deadline for the response headers, and for each gap between body chunks (a stall). */
  readonly timeout_ms: number;
  /** Connections to the provider; requests beyond it wait in line. */
  readonly max_concurrency: number;
}

/**
 * A failed upstream call: an HTTP error answer (status ≥ 400), an error the provider sent inside a
 * stream (status 502), or no answer at all (status 0). `retryAfter` is the provider's Retry-After,
 * as it sent it.
 */
export class UpstreamError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly kind: 'http' | 'timeout' | 'network' | 'protocol' = 'http',
    readonly retryAfter: string | null = null,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/**
 * The provider refused the gateway's own credentials (401, 403): the operator's to mend, never a
 * refusal of the client's request. Such an error carries the gateway's message, not the
 * provider's, which may quote part of the gateway's key (errorFromAnswer).
 */
export function isCredentialRefusal(err: unknown): boolean {
  return err instanceof UpstreamError && (err.status === 401 || err.status === 403);
}

/** How an upstream call ended, for metrics: by status class, or why there was no answer. */
export type UpstreamOutcome = 'ok' | 'client_error' | 'server_error' | 'timeout' | 'network' | 'aborted';

/** Sees every call of a channel: the model asked for (`none` for calls without one), outcome, time to headers. */
export type UpstreamObserver = (channel: string, model: string, outcome: UpstreamOutcome, seconds: number) => void;

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Dispatcher.ResponseData['headers'];
  readonly body: Dispatcher.ResponseData['body'];
}

/**
 * One keep-alive connection pool per channel (undici), with deadlines, streaming bodies and
 * aborts. Bodies are never buffered whole except JSON answers.
 */
export class Channel {
  private readonly pool: Pool;
  private readonly basePath: string;

  constructor(
    readonly config: ChannelConfig,
    private readonly observe: UpstreamObserver = () => undefined,
  ) {
    const url = new URL(config.base_url);
    this.basePath = url.pathname.replace(/\/$/, '');
    this.pool = new Pool(url.origin, {
      connections: config.max_concurrency,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: config.timeout_ms,
      bodyTimeout: config.timeout_ms,
    });
  }

  private async send(method: 'GET' | 'POST' | 'DELETE', path: string, body: unknown, signal?: AbortSignal, accept = 'application/json', extraHeaders: Record<string, string> = {}): Promise<UpstreamResponse> {
    const started = performance.now();
    const model = modelOf(body);
    const observe = (outcome: UpstreamOutcome) => this.observe(this.config.name, model, outcome, (performance.now() - started) / 1000);
    // Written before the call: a body that cannot be written is the gateway's fault, not the provider's.
    const payload = body === undefined ? undefined : JSON.stringify(body);
    try {
      const res = await this.pool.request({
        method,
        path: this.basePath + path,
        headers: {
          accept,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(this.config.api_key ? { authorization: `Bearer ${this.config.api_key}` } : {}),
          ...extraHeaders,
        },
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

  /** A JSON answer; an HTTP error status becomes an UpstreamError carrying the provider's message. */
  async json<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, signal?: AbortSignal, headers?: Record<string, string>): Promise<T> {
    const res = await this.send(method, path, body, signal, 'application/json', headers);
    const text = await readText(res.body, this.config.name);
    if (res.status >= 400) throw errorFromAnswer(res, text, this.config.name);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new UpstreamError(502, `channel ${this.config.name} answered with invalid JSON`, null, 'protocol');
    }
  }

  /** An event stream; the HTTP error status of a refused stream becomes an UpstreamError before any event. */
  async stream(path: string, body: unknown, signal?: AbortSignal): Promise<AsyncGenerator<SseEvent>> {
    const res = await this.send('POST', path, body, signal, 'text/event-stream');
    if (res.status >= 400) throw errorFromAnswer(res, await readText(res.body, this.config.name), this.config.name);
    const name = this.config.name;
    return (async function* events() {
      try {
        yield* parseSse(res.body);
      } catch (err) {
        throw toUpstreamError(err, name);
      } finally {
        res.body.destroy();
      }
    })();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function modelOf(body: unknown): string {
  const model = body && typeof body === 'object' ? (body as { model?: unknown }).model : undefined;
  return typeof model === 'string' ? model : 'none';
}

/** The whole body as UTF-8 text, decoded at once (a character split between two chunks stays whole). */
async function readText(body: UpstreamResponse['body'], channel: string): Promise<string> {
  try {
    return await body.text();
  } catch (err) {
    throw toUpstreamError(err, channel);
  }
}

/** A header value that can be passed on as it came: printable ASCII, as HTTP allows. */
const PASSABLE_HEADER = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** The provider's Retry-After, unchanged, or null when it sent none the gateway could pass on. */
function retryAfterOf(headers: UpstreamResponse['headers']): string | null {
  const value = headers['retry-after'];
  return typeof value === 'string' && PASSABLE_HEADER.test(value) ? value : null;
}

function errorFromAnswer(res: UpstreamResponse, text: string, channel: string): UpstreamError {
  const status = res.status;
  if (status === 401 || status === 403) {
    return new UpstreamError(status, `channel ${channel}: the provider refused the gateway's credentials (HTTP ${status})`, 'upstream_auth_failed');
  }
  const retryAfter = retryAfterOf(res.headers);
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    const error = parsed.error;
    if (typeof error === 'string') return new UpstreamError(status, error, null, 'http', retryAfter);
    const reported = reportedError(error);
    if (reported) return new UpstreamError(status, reported.message, reported.code, 'http', retryAfter);
  } catch {
    // not JSON: use the text itself
  }
  return new UpstreamError(status, text.slice(0, 500) || `upstream answered HTTP ${status}`, null, 'http', retryAfter);
}

/** The message and code of an OpenAI error object (`{message, code, …}`), or null when it has no message. */
function reportedError(error: unknown): { message: string; code: string | null } | null {
  if (typeof error !== 'object' || error === null) return null;
  const { message, code } = error as { message?: unknown; code?: unknown };
  return typeof message === 'string' ? { message, code: typeof code === 'string' ? code : null } : null;
}

/**
 * An error the provider sent inside a stream it had begun with 200 (chat's `data: {"error": {…}}`
 * item, Responses' `error` event): a failure of the provider, carrying its code and message.
 */
export function streamedError(error: unknown, channel: string): UpstreamError {
  const reported = reportedError(error);
  return new UpstreamError(502, reported?.message ?? `channel ${channel} sent an error in its stream`, reported?.code ?? null);
}

function toUpstreamError(err: unknown, channel: string): unknown {
  if (err instanceof UpstreamError) return err;
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new UpstreamError(0, `channel ${channel} timed out`, 'upstream_timeout', 'timeout');
  }
  if ((err as { name?: string }).name === 'AbortError' || err instanceof undiciErrors.RequestAbortedError) return err;
  return new UpstreamError(0, `channel ${channel} is unreachable: ${(err as Error).message}`, 'upstream_unreachable', 'network');
}
