import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Pool } from 'pg';
import { DEFAULT_CATALOG_FILE } from '../../../src/billing/catalog';
import type { ChannelEntry } from '../../../src/upstreams/registry';
import type { GatewayProcess } from '../gateway-process';
import type { Fleet } from './fleet';
import { traffic } from './traffic';

/**
 * The legs of the multi-host test (test/integration/fleet-hosts.test.ts) that depend on other parts
 * of issue 43: object storage (used) and routing (not merged when this was written: nothing calls
 * its leg yet; it says what it expects, and the test calls it once routing is on main).
 */

/** The name of a channel's copy on the second provider host. */
export const standbyOf = (channel: string) => `${channel}-standby`;

/**
 * Routing (issue 43, part 1): every channel twice, once on each provider host, the second named
 * standbyOf(name). Expects CHANNELS entries as on main (name, protocol, base_url, timeout_ms) and
 * a short timeout: a provider host cut off answers nothing, and the failover happens at the
 * timeout before the first byte (a new connection fails sooner, with EHOSTUNREACH, once the
 * host's address is unknown).
 */
export function channelsOnTwoProviders(onProvider1: readonly ChannelEntry[], onProvider2: readonly ChannelEntry[]): ChannelEntry[] {
  return [...onProvider1.map((entry) => ({ ...entry, timeout_ms: 5_000 })), ...onProvider2.map((entry) => ({ ...entry, name: standbyOf(entry.name), timeout_ms: 5_000 }))];
}

/**
 * Routing: the default catalog with each model served by its channel first (priority 1) and that
 * channel's standby second (priority 0), written to `dir`; the gateways' CATALOG_FILE. Expects the
 * routing branch's catalog shape: `channels: [{ name, priority, weight }]` in place of `channel`.
 */
export function catalogWithStandbys(dir: string): string {
  const catalog = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: { channel?: string; channels?: unknown }[] };
  for (const model of catalog.models) {
    const channel = model.channel ?? 'default';
    delete model.channel;
    model.channels = [
      { name: channel, priority: 1, weight: 1 },
      { name: standbyOf(channel), priority: 0, weight: 1 },
    ];
  }
  const file = path.join(dir, 'catalog-with-standbys.json');
  fs.writeFileSync(file, JSON.stringify(catalog, null, 2));
  return file;
}

/**
 * Routing: provider1's host cut off under load. Every request on every gateway still succeeds,
 * served by the standby channels on provider2; after the restore, traffic returns to provider1
 * (once its channels' circuits close again). Expects: the gateways run with
 * channelsOnTwoProviders and catalogWithStandbys; a settlement event (`ReservationSettled`)
 * naming the channel that served in `data.channel`.
 */
export async function providerHostCutLeg(fleet: Fleet, gateways: readonly GatewayProcess[], key: string, pool: Pool, files: string[], deadlineMs: number): Promise<void> {
  const beforeCut = await settledChannelsSince(pool, null);
  await fleet.network.cut('provider1');
  try {
    const during = await traffic(gateways, key, files).done;
    expect(during.filter((o) => !o.ok), 'requests while provider1 is cut off').to.deep.equal([]);
    const served = await settledChannelsSince(pool, beforeCut.position);
    expect(served.channels.filter((channel) => !channel.endsWith('-standby')), 'settlements while provider1 is cut off, by a channel on it').to.deep.equal([]);
  } finally {
    await fleet.network.restore('provider1');
  }
  const mark = await settledChannelsSince(pool, null);
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const after = await traffic(gateways, key, files).done;
    expect(after.filter((o) => !o.ok), 'requests after provider1 is back').to.deep.equal([]);
    const since = await settledChannelsSince(pool, mark.position);
    if (since.channels.some((channel) => !channel.endsWith('-standby'))) return;
    if (Date.now() > deadline) throw new Error('no request went back to provider1 after its restore');
  }
}

/** The channels named by the settlements after `position` (es_events.position), and the newest position. */
async function settledChannelsSince(pool: Pool, position: string | null): Promise<{ channels: string[]; position: string }> {
  const { rows } = await pool.query<{ channel: string | null; position: string }>(
    `SELECT data->>'channel' AS channel, position::text FROM es_events
      WHERE type = 'ReservationSettled' AND ($1::bigint IS NULL OR position > $1::bigint) ORDER BY position`,
    [position],
  );
  return { channels: rows.map((r) => r.channel ?? ''), position: rows.at(-1)?.position ?? position ?? '0' };
}

/**
 * Object storage (issue 43, part 4): each gateway keeps its own DATA_DIR and every file on the
 * object-store host, so that "every file served by every gateway" holds without a shared disk.
 * Returns each gateway's settings.
 */
export async function settingsWithObjectStore(fleet: Fleet, gatewayNames: readonly string[], makeDataDir: (name: string) => string): Promise<Map<string, Record<string, string>>> {
  const storeSettings = await fleet.startObjectStore('fleet-files');
  return new Map(gatewayNames.map((name) => [name, { ...storeSettings, DATA_DIR: makeDataDir(name) }]));
}
