import type { TaskEngine } from '../tasks/engine';
import { ASSET_KIND, assetStatus } from './asset-kind';

/**
 * The account's assets among `assetIds` (as fresh as their streams), for a video request that
 * names them; other accounts' assets and unknown ids map to null alike.
 */
export async function findAssets(tasks: TaskEngine, accountId: string, assetIds: readonly string[]): Promise<Map<string, { status: 'processing' | 'active' | 'failed'; upstreamId: string | null } | null>> {
  const found = new Map<string, { status: 'processing' | 'active' | 'failed'; upstreamId: string | null } | null>();
  for (const id of new Set(assetIds)) {
    const row = await tasks.read(ASSET_KIND, id, accountId);
    found.set(id, row ? { status: assetStatus(row), upstreamId: row.upstream_id } : null);
  }
  return found;
}
