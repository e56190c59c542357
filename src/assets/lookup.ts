import type { TaskEngine } from '../tasks/engine';
import { ASSET_KIND, assetStatus } from './asset-kind';

/** An asset as a video request may use it: its state, the provider's id and the channel (provider account) that made it. */
export interface FoundAsset {
  readonly status: 'processing' | 'active' | 'failed';
  readonly upstreamId: string | null;
  readonly channel: string | null;
}

/**
 * The account's assets among `assetIds` (as fresh as their streams), for a video request that
 * names them; other accounts' assets and unknown ids map to null alike.
 */
export async function findAssets(tasks: TaskEngine, accountId: string, assetIds: readonly string[]): Promise<Map<string, FoundAsset | null>> {
  const found = new Map<string, FoundAsset | null>();
  for (const id of new Set(assetIds)) {
    const row = await tasks.read(ASSET_KIND, id, accountId);
    found.set(id, row ? { status: assetStatus(row), upstreamId: row.upstream_id, channel: row.upstream_channel } : null);
  }
  return found;
}
