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

/** A failed upstream call: an HTTP error answer (status ≥ 400) or no answer at all (status 0). */
export class UpstreamError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly kind: 'http' | 'timeout' | 'network' | 'protocol' = 'http',
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/**
 * The provider refused the gateway's own credentials (401, 403): the operator's to mend, never a
 * refusal of the client's request. Such an error carries the gateway's message, not the
 * provider's, which may quote part of the gateway's key (errorFromBody).
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

  private async send(method: 'GET' | 'POST', path: string, body: unknown, signal?: AbortSignal, accept = 'application/json', extraHeaders: Record<string, string> = {}): Promise<UpstreamResponse> {
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
      return { status: res.statusCode, body: res.body };
    } catch (err) {
      const failure = toUpstreamError(err, this.config.name);
      observe(failure instanceof UpstreamError ? (failure.kind === 'timeout' ? 'timeout' : 'network') : 'aborted');
      throw failure;
    }
  }

  /** A JSON answer; an HTTP error status becomes an UpstreamError carrying the provider's message. */
  async json<T>(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal, headers?: Record<string, string>): Promise<T> {
    const res = await this.send(method, path, body, signal, 'application/json', headers);
    const text = await readText(res.body, this.config.name);
    if (res.status >= 400) throw errorFromBody(res.status, text, this.config.name);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new UpstreamError(502, `channel ${this.config.name} answered with invalid JSON`, null, 'protocol');
    }
  }

  /** An event stream; the HTTP error status of a refused stream becomes an UpstreamError before any event. */
  async stream(path: string, body: unknown, signal?: AbortSignal): Promise<AsyncGenerator<SseEvent>> {
    const res = await this.send('POST', path, body, signal, 'text/event-stream');
    if (res.status >= 400) throw errorFromBody(res.status, await readText(res.body, this.config.name), this.config.name);
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

function errorFromBody(status: number, text: string, channel: string): UpstreamError {
  if (status === 401 || status === 403) {
    return new UpstreamError(status, `channel ${channel}: the provider refused the gateway's credentials (HTTP ${status})`, 'upstream_auth_failed');
  }
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } | string };
    const error = parsed.error;
    if (typeof error === 'string') return new UpstreamError(status, error);
    if (error && typeof error.message === 'string') return new UpstreamError(status, error.message, typeof error.code === 'string' ? error.code : null);
  } catch {
    // not JSON: use the text itself
  }
  return new UpstreamError(status, text.slice(0, 500) || `upstream answered HTTP ${status}`);
}

function toUpstreamError(err: unknown, channel: string): unknown {
  if (err instanceof UpstreamError) return err;
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new UpstreamError(0, `channel ${channel} timed out`, 'upstream_timeout', 'timeout');
  }
  if ((err as { name?: string }).name === 'AbortError' || err instanceof undiciErrors.RequestAbortedError) return err;
  return new UpstreamError(0, `channel ${channel} is unreachable: ${(err as Error).message}`, 'upstream_unreachable', 'network');
}
