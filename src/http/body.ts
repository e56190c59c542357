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
 * Reads and parses a JSON body, refusing with `payload_too_large` as soon as it passes the limit
 * (it never buffers more than that), with 400 `unsupported_media_type` for a content type other
 * than JSON (no spec list has 415), and with 400 when it is not JSON.
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
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop must not destroy the request: the client has to get its answer.
  for await (const chunk of ctx.req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      // A body sent without Content-Length (chunked) passed the limit: answer it, drop the rest
      // unbuffered as it arrives, and close the connection after the answer.
      ctx.set('connection', 'close');
      ctx.req.resume();
      throw payloadTooLarge();
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  ctx.state.rawBody = text;
  if (text.trim() === '') throw new ApiError(400, 'invalid_json', 'request body must be a JSON object');
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, 'invalid_json', 'request body is not valid JSON');
  }
  assertSafeText(body);
  return body;
}
