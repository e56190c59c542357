import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Pool } from 'pg';
import { DEFAULT_CATALOG_FILE } from '../../../src/billing/catalog';
import type { ChannelEntry } from '../../../src/upstreams/registry';
import { callJson, type GatewayProcess } from '../gateway-process';
import type { Fleet } from './fleet';
import { arkReleasePath } from '../simulated-ark';
import { waitFor } from '../wait';
import { traffic, type Outcome } from './traffic';

/**
 * The legs of the multi-host test (test/integration/fleet-hosts.test.ts) that depend on other parts
 * of issue 43: object storage (the gateways' settings) and routing (a provider host cut off while
 * each model's standby channel on the other provider host serves).
 */

/** The name of a channel's copy on the second provider host. */
export const standbyOf = (channel: string) => `${channel}-standby`;

/**
 * How long a channel on provider1 waits for the response headers (and for each next piece of a
 * body). A provider host cut off answers nothing and resets nothing: a request on a connection
 * opened before the cut fails over only at this timeout (`timeout` in
 * gateway_channel_failovers_total; a new connection would fail sooner, with EHOSTUNREACH, once the
 * kernel's neighbour entry for the host has failed, but the gateways' pools hold open connections
 * and every failover of the leg is a timeout), so it bounds what the cut costs a request.
 */
export const FAILOVER_TIMEOUT_MS = 5_000;

/** The standby channels are never cut off: a long timeout, so that a slow machine never fails them. */
const STANDBY_TIMEOUT_MS = 30_000;

/**
 * The model and channel of the requests the gateway-host cut holds at provider1's gate: a copy of
 * `default` whose timeout outlasts the test, so that they stay in flight, however slow the
 * machine, until the test opens the gate. Under FAILOVER_TIMEOUT_MS the gateway would give up on
 * them and answer from the standby before the cut.
 */
export const HELD = { model: 'chat-pro', channel: 'default-held', timeoutMs: 300_000 } as const;

/**
 * Every channel twice, once on each provider host, the second named standbyOf(name); HELD's
 * channel is added on both. Give the result as CHANNELS, with catalogWithStandbys as CATALOG_FILE.
 */
export function channelsOnTwoProviders(onProvider1: readonly ChannelEntry[], onProvider2: readonly ChannelEntry[]): ChannelEntry[] {
  const timeoutOf = (name: string, onCutHost: boolean) => (name === HELD.channel ? HELD.timeoutMs : onCutHost ? FAILOVER_TIMEOUT_MS : STANDBY_TIMEOUT_MS);
  return [
    ...withHeldChannel(onProvider1).map((entry) => ({ ...entry, timeout_ms: timeoutOf(entry.name, true) })),
    ...withHeldChannel(onProvider2).map((entry) => ({ ...entry, name: standbyOf(entry.name), timeout_ms: timeoutOf(entry.name, false) })),
  ];
}

function withHeldChannel(entries: readonly ChannelEntry[]): ChannelEntry[] {
  const original = entries.find((entry) => entry.name === 'default');
  if (!original) throw new Error('the channels lack `default`, of which HELD\'s channel is a copy');
  return [...entries, { ...original, name: HELD.channel }];
}

/**
 * The default catalog with each model served by its channel on provider1 first (priority 1) and
 * that channel's standby on provider2 second (priority 0), HELD.model by HELD.channel; written to
 * `dir`, for CATALOG_FILE. Answers the file and each model's channel on provider1.
 */
export function catalogWithStandbys(dir: string): { file: string; channelOf: (model: string) => string } {
  const catalog = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: { id: string; channel?: string; channels?: unknown }[] };
  const channels = new Map<string, string>();
  for (const model of catalog.models) {
    const channel = model.id === HELD.model ? HELD.channel : (model.channel ?? 'default');
    channels.set(model.id, channel);
    delete model.channel;
    model.channels = [
      { name: channel, priority: 1, weight: 1 },
      { name: standbyOf(channel), priority: 0, weight: 1 },
    ];
  }
  const file = path.join(dir, 'catalog-with-standbys.json');
  fs.writeFileSync(file, JSON.stringify(catalog, null, 2));
  const channelOf = (model: string) => {
    const channel = channels.get(model);
    if (!channel) throw new Error(`the catalog has no model ${model}`);
    return channel;
  };
  return { file, channelOf };
}

/**
 * Circuit settings for the gateways of the provider-host cut: a channel that fails twice running
 * is left alone for half a second, and probed again at least every second, so that traffic
 * returns to provider1 within a second or two of its restore (the defaults pause up to ten minutes).
 */
export const SHORT_CIRCUITS = {
  CHANNEL_CIRCUIT_FAILURES: '2',
  CHANNEL_CIRCUIT_OPEN_MS: '500',
  CHANNEL_CIRCUIT_MAX_OPEN_MS: '1000',
} as const;

/** An API key of the leg's account: `id` is the actor its settlements name (`context.actor`). */
export interface LegKey {
  readonly id: string;
  readonly key: string;
}

export interface ProviderCutSetup {
  readonly fleet: Fleet;
  readonly gateways: readonly GatewayProcess[];
  /** For the channels' health each gateway reports, in the failure of a request during the cut. */
  readonly adminToken: string;
  readonly pool: Pool;
  /** The file links of the traffic, for the final checks (every file served by every gateway). */
  readonly files: string[];
  /**
   * A new key of one funded account. Each phase of the leg has keys of its own, so that the
   * settlements naming a phase's keys are exactly that phase's requests, whatever else settles.
   */
  readonly newKey: () => Promise<LegKey>;
  /** A model's channel on provider1 (catalogWithStandbys). */
  readonly channelOf: (model: string) => string;
  /**
   * Creates a video task on `gateway` that the provider holds (`[sim:hold]`) until it is
   * released; answers the task's id and the provider's.
   */
  readonly heldVideo: (gateway: GatewayProcess, key: string) => Promise<{ id: string; upstreamId: string }>;
  readonly deadlineMs: number;
}

/**
 * Routing: provider1's host cut off under load. Every request on every gateway succeeds, each
 * settled once by its model's standby channel on provider2; video tasks accepted by provider1
 * before the cut, whose polls may go nowhere else, wait and finish after the restore; after the
 * restore, traffic returns to provider1 (once its channels' circuits close again: SHORT_CIRCUITS).
 * Answers the ids of the video tasks, for the final checks.
 */
export async function providerHostCutLeg(setup: ProviderCutSetup): Promise<string[]> {
  const { fleet, gateways, pool, files, channelOf, deadlineMs } = setup;
  const provider1 = fleet.providerUrl('provider1');
  // On the gateways that were never cut off, so that no circuit opened in the gateway-host cut
  // sends their submission elsewhere: each is accepted by provider1, and tied to it.
  const videoKey = await setup.newKey();
  const videos = await Promise.all(gateways.filter((g) => g.name !== 'gw1').map((g) => setup.heldVideo(g, videoKey.key)));
  expect(await acceptedBy(pool, videos.map((v) => v.id)), 'the channel that accepted each held video').to.deep.equal(videos.map(() => channelOf(VIDEO_MODEL)));

  const cutKey = await setup.newKey();
  await fleet.network.cut('provider1');
  try {
    const during = await traffic(gateways, cutKey.key, files).done;
    const failed = during.filter((o) => !o.ok);
    // Once seen failing under load (429: every channel of chat-fast cooling down or paused, the
    // standby on provider2 included), cause unknown: each gateway's view of its channels says more.
    const health = failed.length === 0 ? '' : JSON.stringify(await channelHealthOf(gateways, setup.adminToken));
    expect(failed, `requests while provider1 is cut off; the channels' health: ${health}`).to.deep.equal([]);
    expect(await settledBy(pool, cutKey, during.length, deadlineMs), 'who settled the requests made while provider1 was cut off').to.deep.equal(servedBy(during, (model) => standbyOf(channelOf(model))));
    // Each held video's poll fails at least once while the cut lasts (its job records the error),
    // and the task waits: neither failed nor polled elsewhere.
    const pollErrors = await waitFor('a failed poll of each held video', async () => {
      const { rows } = await pool.query<{ last_error: string | null }>(`SELECT last_error FROM jobs WHERE kind = 'task.poll' AND key = ANY($1)`, [videos.map((v) => `video-${v.id}`)]);
      return rows.length === videos.length && rows.every((r) => r.last_error !== null) ? rows.map((r) => r.last_error!) : null;
    }, deadlineMs, 100);
    expect(pollErrors.filter((e) => !e.includes(`channel ${channelOf(VIDEO_MODEL)} `)), 'poll errors not of the video channel on provider1').to.deep.equal([]);
    const reader = gateways.find((g) => g.name !== 'gw1')!;
    for (const video of videos) {
      const status = (await callJson(`${reader.url}/v1/videos/generations/${video.id}`, videoKey.key)).body.status;
      expect(status, `video ${video.id} while its provider is cut off`).to.be.oneOf(['queued', 'running']);
    }
  } finally {
    await fleet.network.restore('provider1');
  }
  for (const video of videos) expect((await fetch(provider1 + arkReleasePath(video.upstreamId), { method: 'POST' })).status, `releasing ${video.upstreamId}`).to.equal(200);

  // Wave after wave, every request succeeds and is settled once, by its model's channel on
  // provider1 or its standby, until a whole wave is served by provider1: every gateway's
  // circuits have closed again.
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const waveKey = await setup.newKey();
    const wave = await traffic(gateways, waveKey.key, files).done;
    expect(wave.filter((o) => !o.ok), 'requests after provider1 is back').to.deep.equal([]);
    const settled = await settledBy(pool, waveKey, wave.length, deadlineMs);
    const byProvider1 = servedBy(wave, channelOf);
    if (settled.join() === byProvider1.join()) break;
    expect(settled, 'one settlement per request').to.have.length(wave.length);
    const eitherChannel = new Set([...byProvider1, ...servedBy(wave, (model) => standbyOf(channelOf(model)))]);
    expect(settled.filter((s) => !eitherChannel.has(s)), 'settlements after the restore by neither the model\'s channel nor its standby').to.deep.equal([]);
    if (Date.now() > deadline) throw new Error(`traffic did not return to provider1 after its restore: the last wave was settled ${settled.join(', ')}`);
  }
  return videos.map((v) => v.id);
}

const VIDEO_MODEL = 'video-ref-2.0';

/** `<model> by <channel>` for each request, sorted: what the settlements must name. */
function servedBy(outcomes: readonly Outcome[], channel: (model: string) => string): string[] {
  return outcomes.map((o) => `${o.model} by ${channel(o.model)}`).sort();
}

/**
 * `<model> by <channel>` for each settlement of requests made with `key`, sorted, once there are
 * `count` of them (a streamed answer may end before its settlement is appended).
 */
async function settledBy(pool: Pool, key: LegKey, count: number, deadlineMs: number): Promise<string[]> {
  const read = async () =>
    (
      await pool.query<{ model: string; channel: string | null }>(
        `SELECT data->'context'->>'model' AS model, data->>'channel' AS channel FROM es_events
          WHERE type = 'ReservationSettled' AND data->'context'->>'actor' = $1`,
        [key.id],
      )
    ).rows;
  const rows = await waitFor(`${count} settlements of key ${key.id}`, async () => {
    const found = await read();
    return found.length >= count ? found : null;
  }, deadlineMs, 100);
  return rows.map((r) => `${r.model} by ${r.channel ?? '(no channel)'}`).sort();
}

/** The channel that accepted each task, from its TaskUpstreamAccepted event. */
async function acceptedBy(pool: Pool, taskIds: readonly string[]): Promise<(string | null)[]> {
  const { rows } = await pool.query<{ stream_id: string; channel: string | null }>(
    `SELECT stream_id, data->>'channel' AS channel FROM es_events WHERE type = 'TaskUpstreamAccepted' AND stream_id = ANY($1)`,
    [taskIds.map((id) => `video-${id}`)],
  );
  return taskIds.map((id) => rows.find((r) => r.stream_id === `video-${id}`)?.channel ?? null);
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

/** Each gateway's channels as its router sees them (GET /admin/v1/channels): name, health and recent calls. */
async function channelHealthOf(gateways: readonly GatewayProcess[], adminToken: string): Promise<unknown[]> {
  return Promise.all(
    gateways.map(async (g) => {
      const listed = await callJson(`${g.url}/admin/v1/channels?limit=100`, adminToken).catch((err: unknown) => ({ status: 0, body: String(err) }));
      const channels = (listed.body as { data?: { id: string; health: unknown; recent_calls?: unknown }[] }).data;
      return { gateway: g.name, channels: channels?.map((c) => ({ id: c.id, health: c.health, recent_calls: c.recent_calls })) ?? listed.body };
    }),
  );
}
