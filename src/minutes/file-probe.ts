import { Agent, request } from 'undici';
import { contentTypeOf } from '../files/content-types';
import type { FileStore } from '../files/store';
import type { UrlSigner } from '../files/signed-urls';
import { DomainError } from '../domain/decider';
import { clientUrlProblem } from '../http/urls';
import { checkCallbackTarget, guardedConnector } from '../webhooks/target-guard';

/** Redirects a probe follows (each hop checked like the first URL). */
export const MAX_PROBE_REDIRECTS = 3;
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** What a probe learned of a recording: its size and its media type (`audio/mpeg`), each null when unknown. */
export interface ProbedFile {
  readonly bytes: number | null;
  readonly mediaType: string | null;
}

const UNKNOWN: ProbedFile = { bytes: null, mediaType: null };

/** What one method (HEAD, or a one-byte ranged GET) told about a URL; `stop`: ask nothing more. */
type Answer = ProbedFile | 'stop';

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The media type of a Content-Type header, lower-cased and without parameters. */
function mediaTypeOf(raw: string | undefined): string | null {
  const type = raw?.split(';')[0]?.trim().toLowerCase();
  return type && /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type) ? type : null;
}

function byteCount(raw: string | undefined): number | null {
  if (raw === undefined || !/^\d{1,16}$/.test(raw.trim())) return null;
  const n = Number(raw.trim());
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * The size of a recording before it is accepted (the spec's "under 1 GB") and its media type (for
 * `file_type` when the URL has no known suffix): from the gateway's own file store when the URL is
 * one of its signed links (an upload, POST /v1/files), else from the server: a HEAD request (its
 * Content-Length and Content-Type), and when HEAD gives no size (refused, 403, no Content-Length)
 * a GET of one byte (`Range: bytes=0-0`) whose Content-Range names the total (its body is not
 * read; its Content-Type is taken when HEAD gave none). Up to MAX_PROBE_REDIRECTS redirects are
 * followed, every hop going through the same target check as the first URL. What still cannot be
 * learned (unreachable, slow, a forbidden hop, too many redirects) is unknown, and an unknown size
 * is accepted: the provider is the judge then. Requests go only to public addresses unless
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
      connect: guardedConnector(deps.allowPrivateTargets, { timeout }),
      headersTimeout: timeout,
      bodyTimeout: timeout,
      keepAliveTimeout: 1_000,
    });
  }

  /**
   * Size and media type, each null when unknown. Throws a 400 for a link of ours that expired or
   * whose file is gone, and for any other URL off a public host (the address rule of every client
   * URL, src/http/public-address.ts), which the provider is not asked to fetch either. One of our
   * own links is the gateway's file wherever PUBLIC_BASE_URL points.
   */
  async inspect(fileUrl: string): Promise<ProbedFile> {
    let url: URL;
    try {
      url = new URL(fileUrl);
    } catch {
      return UNKNOWN;
    }
    const own = this.ownKey(url);
    if (own) {
      const verdict = this.deps.signer.verify(own, url.searchParams.get('expires') ?? undefined, url.searchParams.get('sig') ?? undefined);
      if (verdict === 'expired') throw new DomainError('invalid_request', 'file_url is a download link that has expired; fetch a fresh one (GET /v1/files/{id})', { param: 'file_url' });
      if (verdict === 'ok') {
        const stat = await this.deps.files.stat(own);
        if (!stat) throw new DomainError('invalid_request', 'file_url names a file that no longer exists', { param: 'file_url' });
        // Stored keys carry the extension of the type they were uploaded with.
        const stored = contentTypeOf(own);
        return { bytes: stat.bytes, mediaType: stored === 'application/octet-stream' ? null : stored };
      }
    }
    const problem = clientUrlProblem(fileUrl, 'file_url', { httpsOnly: false, allowPrivateTargets: this.deps.allowPrivateTargets });
    if (problem) throw new DomainError('invalid_request', problem, { param: 'file_url' });
    return this.remote(fileUrl);
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

  private async remote(fileUrl: string): Promise<ProbedFile> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    const viaHead = await this.ask(fileUrl, 'HEAD', signal).catch((): Answer => UNKNOWN);
    if (viaHead === 'stop') return UNKNOWN;
    if (viaHead.bytes !== null) return viaHead;
    const viaGet = await this.ask(fileUrl, 'GET', signal).catch((): Answer => UNKNOWN);
    if (viaGet === 'stop') return viaHead;
    return { bytes: viaGet.bytes, mediaType: viaHead.mediaType ?? viaGet.mediaType };
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
        if (!location) return UNKNOWN;
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
      // Only a success describes the file; an error page's type does not.
      const ok = res.statusCode === 200 || res.statusCode === 206;
      return { bytes, mediaType: ok ? mediaTypeOf(header(res.headers, 'content-type')) : null };
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
