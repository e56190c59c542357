import { Agent, request } from 'undici';
import type { FileStore } from '../files/store';
import type { UrlSigner } from '../files/signed-urls';
import { ApiError } from '../http/errors';
import { checkCallbackTarget, guardedLookup } from '../webhooks/target-guard';

/**
 * The size of a recording before it is accepted (the spec's "under 1 GB"): from the gateway's own
 * file store when the URL is one of its signed links (an upload, POST /v1/files), else from a
 * HEAD request. A URL that answers no usable HEAD (refused, no Content-Length, unreachable, slow)
 * has an unknown size and is accepted; the provider is the judge then. The HEAD goes only to
 * public addresses unless FILE_URL_ALLOW_PRIVATE_TARGETS (the same SSRF guard as webhooks).
 */
export class FileProbe {
  private readonly agent: Agent;

  constructor(
    private readonly deps: { files: FileStore; signer: UrlSigner; allowPrivateTargets: boolean; timeoutMs?: number },
  ) {
    const timeout = deps.timeoutMs ?? 5_000;
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
    return this.head(fileUrl);
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

  private async head(fileUrl: string): Promise<number | null> {
    if (await checkCallbackTarget(fileUrl, this.deps.allowPrivateTargets)) return null;
    try {
      const res = await request(fileUrl, { method: 'HEAD', dispatcher: this.agent, signal: AbortSignal.timeout(this.deps.timeoutMs ?? 5_000) });
      await res.body.dump();
      const length = Number(res.headers['content-length']);
      return res.statusCode >= 200 && res.statusCode < 300 && Number.isSafeInteger(length) && length >= 0 ? length : null;
    } catch {
      return null;
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
