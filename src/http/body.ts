import { isUtf8 } from 'node:buffer';
import type { Context } from 'koa';
import { ApiError } from './errors';
import { assertSafeText } from './safe-text';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export interface JsonBodyOptions {
  /** Bytes the body may have (default DEFAULT_BODY_LIMIT). */
  readonly limit?: number;
  /**
   * The status of `payload_too_large`. 400 unless the endpoint's spec list has 413 (video
   * creation): most lists are 400/401/402/429/502, so an oversized body is a bad request there.
   */
  readonly oversizeStatus?: 400 | 413;
}

/**
 * Levels of arrays and objects a JSON body may nest. JSON.parse accepts thousands more than
 * JSON.stringify can write back (it overflows its stack at about 5,000), and what a body holds is
 * written again, to a provider or into an event: a Responses input nested 6,000 deep failed on its
 * way to the provider, reported as an unreachable provider. No request of the API comes near
 * this (a tool's JSON schema of ten nested levels takes about 25).
 */
export const MAX_JSON_DEPTH = 100;

/**
 * Reads and parses a JSON body, refusing with `payload_too_large` as soon as it passes the limit
 * (it never buffers more than that), with 400 `unsupported_media_type` for a content type other
 * than JSON (no spec list has 415), and with 400 when it is not UTF-8, not JSON or nests deeper
 * than MAX_JSON_DEPTH.
 */
export async function readJson(ctx: Context, options: JsonBodyOptions = {}): Promise<unknown> {
  const limit = options.limit ?? DEFAULT_BODY_LIMIT;
  const payloadTooLarge = () => new ApiError(options.oversizeStatus ?? 400, 'payload_too_large', `request body exceeds ${limit} bytes`);
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > limit) throw payloadTooLarge();
  const type = ctx.get('content-type');
  if (type && !/^application\/(.+\+)?json\b/i.test(type)) {
    throw new ApiError(400, 'unsupported_media_type', 'request body must be application/json');
  }
  const bytes = await readBody(ctx, limit, payloadTooLarge);
  // toString would put U+FFFD in place of every bad sequence, and the request be served and billed
  // for text the client never sent. The check runs through the bytes once, at memory speed.
  if (!isUtf8(bytes)) throw new ApiError(400, 'invalid_json', 'request body is not valid UTF-8 (JSON text is UTF-8)');
  const text = bytes.toString('utf8');
  ctx.state.rawBody = text;
  if (text.trim() === '') throw new ApiError(400, 'invalid_json', 'request body must be a JSON object');
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, 'invalid_json', 'request body is not valid JSON');
  }
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    throw new ApiError(400, 'invalid_request', `request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  }
  assertSafeText(body);
  return body;
}

/** Bytes a route that takes no body reads of one: room for `{}` and some whitespace. */
const NO_BODY_LIMIT = 64;
/** What a route that takes no body accepts: nothing, or an empty JSON object (the dashboard, and many clients, send `{}` with every POST). */
const NO_BODY = /^[ \t\r\n]*(\{[ \t\r\n]*\})?[ \t\r\n]*$/;

/**
 * For a route that takes no body: any body but nothing or `{}` is 400 `unexpected_body`, since
 * ignoring it would do the route's work while its client believes its fields were read. Of such
 * a body at most NO_BODY_LIMIT bytes are read, however large it is.
 */
export async function refuseBody(ctx: Context): Promise<void> {
  const { headers } = ctx.req;
  if (headers['transfer-encoding'] === undefined && !(Number(headers['content-length']) > 0)) return;
  const unexpected = () => new ApiError(400, 'unexpected_body', 'this endpoint takes no request body (send none, or {})');
  if (Number(headers['content-length']) > NO_BODY_LIMIT) {
    // Answered without reading it: the connection closes rather than take in what is left.
    ctx.set('connection', 'close');
    throw unexpected();
  }
  if (!NO_BODY.test((await readBody(ctx, NO_BODY_LIMIT, unexpected)).toString('latin1'))) throw unexpected();
}

/**
 * Whether `value` nests arrays and objects more than `limit` levels deep. It recurses at most
 * `limit` + 1 calls deep, however deep JSON.parse went, and allocates nothing: it runs on every body.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestsDeeperThan(item, limit - 1)) return true;
    return false;
  }
  for (const key in value) if (nestsDeeperThan((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}

/**
 * The body when every byte its Content-Length declares is buffered, else null. A body sent with
 * its headers is buffered by the time a handler asks, but Node ends the message only after the
 * microtasks its 'request' event started (the middleware before the handler) have run: waiting for
 * 'end' costs a turn of the event loop that the declared length makes needless.
 */
function wholeBody(req: Context['req']): Buffer | null {
  const declared = Number(req.headers['content-length']);
  if (!Number.isSafeInteger(declared) || declared <= 0 || req.readableFlowing || req.readableLength < declared) return null;
  const body = req.read(declared) as Buffer | null;
  // Flows on to its end (nothing is left), as a body read to the end does.
  req.resume();
  return body;
}

/** The client closed the connection before its body ended: its fault, answered (to no one) as a bad request. */
const aborted = (): ApiError => new ApiError(400, 'incomplete_body', 'the connection closed before the request body ended');

/**
 * The request's body: at once when all its declared bytes are buffered, else from its 'data' and
 * 'end' events (the stream's async iterator costs a promise and a microtask turn per chunk, and
 * one more for the end). Stopping early must not destroy the request: the client has to get its
 * answer.
 */
function readBody(ctx: Context, limit: number, payloadTooLarge: () => ApiError): Promise<Buffer> {
  const req = ctx.req;
  return new Promise((resolve, reject) => {
    if (req.readableEnded) return resolve(Buffer.alloc(0));
    const whole = wholeBody(req);
    if (whole) return resolve(whole);
    if (req.destroyed) return reject(aborted());
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    function onData(chunk: Buffer): void {
      size += chunk.length;
      if (size > limit) {
        // A body sent without Content-Length (chunked) passed the limit: answer it, drop the rest
        // unbuffered as it arrives, and close the connection after the answer.
        stop();
        ctx.set('connection', 'close');
        req.resume();
        reject(payloadTooLarge());
        return;
      }
      chunks.push(chunk);
    }
    function onEnd(): void {
      stop();
      resolve(Buffer.concat(chunks, size));
    }
    function onError(): void {
      // An incoming request errs only when its connection broke ('aborted', ECONNRESET).
      stop();
      reject(aborted());
    }
    function onClose(): void {
      // Closed before its end: the client went away mid-body.
      stop();
      reject(aborted());
    }
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
