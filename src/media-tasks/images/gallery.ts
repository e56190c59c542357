import { authOf, type GatewayContext } from '../../http/context';
import { listBody, pageParams } from '../../http/pagination';
import { unixSeconds } from '../common';
import type { Pool } from 'pg';
import type { Config } from '../../config';
import type { UrlSigner } from '../../files/signed-urls';
import type { ConsumerProgress } from '../../projections-runtime/progress';

/** What the gallery read uses. */
export interface GalleryDeps {
  readonly progress: Pick<ConsumerProgress, 'waitForCommitted'>;
  readonly pool: Pick<Pool, 'query'>;
  readonly signer: UrlSigner;
  readonly config: Pick<Config, 'projectionWaitMs' | 'imageUrlTtlMs'>;
}

interface GalleryRow {
  image_id: string;
  task_id: string | null;
  model: string;
  prompt: string;
  file_key: string;
  created_at: Date;
}

/**
 * GET /v1/gallery?limit=&after=: the account's images, newest first, each with a fresh signed
 * link. Reads wait until the gallery has folded the whole log as it stood when the request came
 * (read your writes across sync generations and tasks alike).
 */
export async function handleGallery(deps: GalleryDeps, ctx: GatewayContext): Promise<void> {
  const page = pageParams(ctx.query, (raw) => /^img_[A-Za-z0-9_]{1,80}$/.test(raw));
  const accountId = authOf(ctx).accountId;
  await deps.progress.waitForCommitted(['gallery'], deps.config.projectionWaitMs);
  const { rows } = await deps.pool.query<GalleryRow>(
    `SELECT image_id, task_id, model, prompt, file_key, created_at FROM rm.gallery_images
     WHERE account_id = $1 AND ($2::text IS NULL OR (created_at, image_id) < (SELECT created_at, image_id FROM rm.gallery_images WHERE image_id = $2 AND account_id = $1))
     ORDER BY created_at DESC, image_id DESC LIMIT $3`,
    [accountId, page.after, page.limit + 1],
  );
  const data = rows.slice(0, page.limit).map((r) => ({
    id: r.image_id,
    task_id: r.task_id,
    model: r.model,
    prompt: r.prompt,
    url: deps.signer.url(r.file_key, deps.config.imageUrlTtlMs).url,
    created_at: unixSeconds(r.created_at),
  }));
  ctx.body = listBody(data, rows.length > page.limit, (item) => item.id);
}
