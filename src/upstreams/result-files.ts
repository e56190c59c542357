/**
 * The result files a provider's task answer links to (Tingwu's presigned OSS links to JSON
 * results), read over the gateway's own HTTP client, not over the channel: they live on the
 * provider's object storage, not at its API, and must not carry the channel's credentials.
 *
 * Only links taken from a provider's authenticated answer are ever followed (never a client's
 * URL), so the address guard of client URLs does not apply; what does: http(s) only, no redirect
 * followed, a deadline for the whole file and a cap on its size. A file that breaks one of these,
 * answers anything but 200 or is not JSON is the provider's failure (502, `protocol`): the task's
 * next poll asks the provider again, which answers fresh links.
 */
import { request } from 'undici';
import { UpstreamError } from './errors';

export interface ResultFileLimits {
  /** The largest file read (a 2-hour transcript with word times is a few MB). */
  readonly maxBytes: number;
  /** For the whole file, headers and body. */
  readonly timeoutMs: number;
}

export const RESULT_FILE_LIMITS: ResultFileLimits = { maxBytes: 32 * 1024 * 1024, timeoutMs: 60_000 };

/** The JSON of a result file the provider behind `channel` linked to (`what` names it in errors). */
export async function fetchResultJson(url: string, channel: string, what: string, limits: ResultFileLimits = RESULT_FILE_LIMITS): Promise<unknown> {
  const failure = (why: string) => new UpstreamError(502, `channel ${channel}: the ${what} result file ${why}`, null, 'protocol');
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw failure('link is not a URL');
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') throw failure('link is not an http(s) URL');
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(target, { method: 'GET', headersTimeout: limits.timeoutMs, bodyTimeout: limits.timeoutMs, signal: AbortSignal.timeout(limits.timeoutMs) });
  } catch (err) {
    throw failure(`could not be fetched: ${(err as Error).message}`);
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw failure(`answered HTTP ${res.statusCode}`);
  }
  if (Number(res.headers['content-length']) > limits.maxBytes) {
    res.body.destroy();
    throw failure(`is larger than ${limits.maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > limits.maxBytes) {
        res.body.destroy();
        throw failure(`is larger than ${limits.maxBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    throw failure(`broke off: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(Buffer.concat(chunks, size).toString('utf8')) as unknown;
  } catch {
    throw failure('is not JSON');
  }
}
