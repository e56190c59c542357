/**
 * Small `node:http` helpers shared by the simulator's handlers: body reading, JSON and error
 * answers in the OpenAI shape, SSE writing with backpressure, and client-disconnect-aware waits.
 * Plain `node:http` on purpose: the simulator is the benchmark's baseline, so it must stay lean.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type ErrorType = 'invalid_request_error' | 'server_error';

/** The OpenAI error body: `{ error: { message, type, param, code } }`. */
export interface OpenAIErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: ErrorType;
    readonly param: string | null;
    readonly code: string | null;
  };
}

/** Thrown by body readers; the router turns it into an error answer. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

/** Reads the whole body, refusing (413) more than `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes = DEFAULT_MAX_BODY_BYTES): Promise<Buffer> {
  // Refuse early when the client announces an oversized body, before buffering any of it.
  if (Number(req.headers['content-length']) > maxBytes) {
    req.resume();
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      // Keep reading but discard: destroying the request would reset the socket before the
      // client could read the 413.
      req.off('data', onData);
      req.resume();
      reject(tooLarge(maxBytes));
    };
    let ended = false;
    req.on('data', onData);
    req.once('end', () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.once('error', reject);
    // A client that leaves mid-upload never sends 'end'; settle so nothing waits forever. (Every
    // request closes: an error made for one that ended would cost a stack trace and say nothing.)
    req.once('close', () => {
      if (!ended) reject(new HttpError(400, 'The request body was not completed.', 'incomplete_body'));
    });
  });
}

/** Reads and parses a JSON body; an empty body is `undefined`, malformed JSON a 400. */
export async function readJsonBody(req: IncomingMessage, maxBytes = DEFAULT_MAX_BODY_BYTES): Promise<unknown> {
  const body = await readBody(req, maxBytes);
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'We could not parse the JSON body of your request.', 'invalid_json');
  }
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `Request body exceeds ${maxBytes} bytes.`, 'request_too_large');
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

export function errorBody(status: number, message: string, code: string | null, param: string | null = null): OpenAIErrorBody {
  return { error: { message, type: errorType(status), param, code } };
}

export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  code: string | null,
  param: string | null = null,
  headers: Readonly<Record<string, string>> = {},
): void {
  sendJson(res, status, errorBody(status, message, code, param), headers);
}

/** What OpenAI answers for a URL it does not serve; also the answer of a disabled interface. */
export function sendNotFound(req: IncomingMessage, res: ServerResponse): void {
  sendError(res, 404, `Invalid URL (${req.method ?? 'GET'} ${pathOf(req)})`, null);
}

function errorType(status: number): ErrorType {
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

/** Error codes the OpenAI API (or a typical OpenAI-compatible upstream) uses for a status. */
const STATUS_CODES: Readonly<Record<number, string>> = {
  400: 'invalid_request',
  401: 'invalid_api_key',
  403: 'forbidden',
  404: 'not_found',
  408: 'timeout',
  409: 'conflict',
  413: 'request_too_large',
  422: 'unprocessable_entity',
  429: 'rate_limit_exceeded',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

export function codeForStatus(status: number): string | null {
  return STATUS_CODES[status] ?? null;
}

/** The path of a request, without its query string. */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** True once the client has gone away (or the answer is finished): stop writing. */
export function isGone(res: ServerResponse): boolean {
  return res.destroyed || res.writableEnded;
}

/**
 * Waits `ms`, resolving early with false if the client disconnects meanwhile, so a delayed
 * request never keeps a timer (or a closing server) waiting for a caller that left.
 */
export function waitUnlessGone(res: ServerResponse, ms: number): Promise<boolean> {
  if (isGone(res)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off('close', onClose);
      resolve(!isGone(res));
    }, ms);
    res.once('close', onClose);
  });
}

/** One SSE frame of a data-only stream (Chat Completions). */
export function dataFrame(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** One SSE frame of a typed stream (Responses): the event name repeats the payload's `type`. */
export function eventFrame(type: string, payload: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;
}

export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
  });
  // Send the headers now: a client (or the gateway) measures time-to-first-byte from here.
  res.flushHeaders();
}

/**
 * Buffers SSE frames and writes them in batches: one write per frame would cost a syscall and a
 * chunked-encoding frame per token. `flush()` honours backpressure and reports whether the
 * client is still there.
 */
export class SseWriter {
  private pending = '';

  constructor(
    private readonly res: ServerResponse,
    private readonly batchBytes = 16 * 1024,
  ) {}

  /** Queues a frame; flushes when the batch is full. Returns false once the client is gone. */
  async push(frame: string): Promise<boolean> {
    this.pending += frame;
    return this.pending.length >= this.batchBytes ? this.flush() : !isGone(this.res);
  }

  async flush(): Promise<boolean> {
    if (isGone(this.res)) return false;
    if (this.pending === '') return true;
    const data = this.pending;
    this.pending = '';
    if (this.res.write(data)) return true;
    return drained(this.res);
  }

  /** Sends what is queued, then waits `ms` (a paced stream). Returns false once the client is gone. */
  async pause(ms: number): Promise<boolean> {
    return (await this.flush()) && waitUnlessGone(this.res, ms);
  }

  /** Writes what is left and ends the response. */
  end(): void {
    if (isGone(this.res)) return;
    const data = this.pending;
    this.pending = '';
    this.res.end(data);
  }
}

function drained(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve(!isGone(res));
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
