import { Agent, request } from 'undici';
import type { FileStore } from '../files/store';
import type { UrlSigner } from '../files/signed-urls';
import { ApiError } from '../http/errors';
import { checkCallbackTarget, guardedLookup } from '../webhooks/target-guard';

/** Redirects a size probe follows (each hop checked like the first URL). */
export const MAX_PROBE_REDIRECTS = 3;
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** What one method (HEAD, or a one-byte ranged GET) told about a URL. */
type Answer = { readonly bytes: number } | 'unusable' | 'stop';

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function byteCount(raw: string | undefined): number | null {
  if (raw === undefined || !/^\d{1,16}$/.test(raw.trim())) return null;
  const n = Number(raw.trim());
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * The size of a recording before it is accepted (the spec's "under 1 GB"): from the gateway's own
 * file store when the URL is one of its signed links (an upload, POST /v1/files), else from the
 * server: a HEAD request (its Content-Length), and when HEAD gives no usable answer (refused, 403,
 * no Content-Length) a GET of one byte (`Range: bytes=0-0`) whose Content-Range names the total
 * (its body is not read). Up to MAX_PROBE_REDIRECTS redirects are followed, every hop going
 * through the same target check as the first URL. A URL whose size still cannot be learned
 * (unreachable, slow, a forbidden hop, too many redirects) has an unknown size and is accepted;
 * the provider is the judge then. Requests go only to public addresses unless
 * FILE_URL_ALLOW_PRIVATE_TARGETS (the same SSRF guard as webhooks), within one time limit in all.
 */
export class FileProbe {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly checkTarget: (url: string) => Promise<string | null>;

  constructor(
    private readonly deps: {
      files: FileStore;
      signer: UrlSigner;
      allowPrivateTargets: boolean;
      timeoutMs?: number;
      /** The check of every URL requested (first and redirected); a message refuses it. Default: the webhook target guard. */
      checkTarget?: (url: string) => Promise<string | null>;
    },
  ) {
    const timeout = deps.timeoutMs ?? 5_000;
    this.timeoutMs = timeout;
    this.checkTarget = deps.checkTarget ?? ((url) => checkCallbackTarget(url, deps.allowPrivateTargets));
    this.agent = new Agent({
      connect: { lookup: guardedLookup(deps.allowPrivateTargets) as never, timeout },
      headersTimeout: timeout,
      bodyTimeout: timeout,
      keepAliveTimeout: 1_000,
    });
  }

  /** Bytes, or null when unknown. Throws a 400 for a link of ours that expired or whose file is gone. */
  async size(fileUrl: string): Promise<number | null> {
    const url = new URL(fileUrl);
    const own = this.ownKey(url);
    if (own) {
      const verdict = this.deps.signer.verify(own, url.searchParams.get('expires') ?? undefined, url.searchParams.get('sig') ?? undefined);
      if (verdict === 'expired') throw new ApiError(400, 'invalid_request', 'file_url is a download link that has expired; fetch a fresh one (GET /v1/files/{id})', { param: 'file_url' });
      if (verdict === 'ok') {
        const stat = await this.deps.files.stat(own);
        if (!stat) throw new ApiError(400, 'invalid_request', 'file_url names a file that no longer exists', { param: 'file_url' });
        return stat.bytes;
      }
    }
    return this.remoteSize(fileUrl);
  }

  /** The store key of one of our `/files/<key>?expires=&sig=` links, or null. */
  private ownKey(url: URL): string | null {
    if (!url.pathname.startsWith('/files/') || !url.searchParams.has('sig')) return null;
    try {
      return url.pathname.slice('/files/'.length).split('/').map(decodeURIComponent).join('/');
    } catch {
      return null;
    }
  }

  private async remoteSize(fileUrl: string): Promise<number | null> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const viaHead = await this.ask(fileUrl, 'HEAD', signal);
      if (typeof viaHead === 'object') return viaHead.bytes;
      if (viaHead === 'stop') return null;
      const viaGet = await this.ask(fileUrl, 'GET', signal);
      return typeof viaGet === 'object' ? viaGet.bytes : null;
    } catch {
      return null;
    }
  }

  /** One method, following redirects; every URL requested passes the target check first. */
  private async ask(fileUrl: string, method: 'HEAD' | 'GET', signal: AbortSignal): Promise<Answer> {
    let current = fileUrl;
    for (let hop = 0; ; hop++) {
      if (await this.checkTarget(current)) return 'stop';
      const res = await request(current, {
        method,
        headers: method === 'GET' ? { range: 'bytes=0-0' } : {},
        dispatcher: this.agent,
        signal,
      });
      // Nothing of a body is read: a HEAD has none, and a GET's is dropped (the connection with it).
      res.body.on('error', () => undefined);
      if (method === 'HEAD') await res.body.dump().catch(() => undefined);
      else res.body.destroy();

      if (REDIRECT_STATUSES.has(res.statusCode)) {
        const location = header(res.headers, 'location');
        if (!location) return 'unusable';
        if (hop >= MAX_PROBE_REDIRECTS) return 'stop';
        let next: URL;
        try {
          next = new URL(location, current);
        } catch {
          return 'stop';
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') return 'stop';
        current = next.href;
        continue;
      }
      const bytes = method === 'HEAD' ? FileProbe.headSize(res.statusCode, res.headers) : FileProbe.rangeSize(res.statusCode, res.headers);
      return bytes === null ? 'unusable' : { bytes };
    }
  }

  /** A 2xx HEAD's Content-Length. */
  private static headSize(status: number, headers: Record<string, string | string[] | undefined>): number | null {
    return status >= 200 && status < 300 ? byteCount(header(headers, 'content-length')) : null;
  }

  /** The total of a ranged GET: a 206's (or 416's) Content-Range `bytes 0-0/N`, or a 200's whole Content-Length (a server ignoring Range). */
  private static rangeSize(status: number, headers: Record<string, string | string[] | undefined>): number | null {
    if (status === 200) return byteCount(header(headers, 'content-length'));
    if (status !== 206 && status !== 416) return null;
    const total = /^\s*bytes\s+(?:\d+-\d+|\*)\/(\d+)\s*$/i.exec(header(headers, 'content-range') ?? '')?.[1];
    return byteCount(total);
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
