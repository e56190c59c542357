import Router from '@koa/router';
import type { ChannelService, ChannelView } from './service';
import type { ProbeResult } from '../upstreams/probe';
import type { ChannelHealth } from '../upstreams/routing/health';
import type { RecentCalls } from '../upstreams/routing/call-stats';
import { ReadModelBehindError } from '../projections-runtime/progress';
import type { GatewayState } from '../http/context';
import { readJson } from '../http/body';
import { ApiError } from '../http/errors';
import { listBody, pageParams } from '../http/pagination';
import { validator } from '../http/validation';
import { CHANNEL_NAME_PATTERN } from '../upstreams/channel-name';

/** Who acts through the admin API today; a later issue adds named operators. */
const ADMIN_ACTOR = 'admin-token';


/** The fields of a channels entry, as CHANNELS spells them; their rules are channelConfigs' (src/config.ts). */
const ENTRY_PROPERTIES = {
  protocol: { type: 'string', minLength: 1, maxLength: 64 },
  base_url: { type: 'string', minLength: 1, maxLength: 2048 },
  api_key: { type: 'string', maxLength: 8192 },
  headers: { type: 'object' },
  volcengine: { type: 'object' },
  alibaba: { type: 'object' },
  timeout_ms: { type: 'integer' },
  max_concurrency: { type: 'integer' },
  enabled: { type: 'boolean' },
} as const;

export const CREATE_CHANNEL_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string', pattern: CHANNEL_NAME_PATTERN }, ...ENTRY_PROPERTIES },
  required: ['name', 'base_url'],
  additionalProperties: false,
};

export const PATCH_CHANNEL_SCHEMA = {
  type: 'object',
  properties: { ...ENTRY_PROPERTIES, reason: { type: 'string', minLength: 1, maxLength: 500 } },
  minProperties: 1,
  additionalProperties: false,
};

const parseCreate = validator<Parameters<ChannelService['create']>[0]>(CREATE_CHANNEL_SCHEMA);
const parsePatch = validator<Parameters<ChannelService['update']>[1]>(PATCH_CHANNEL_SCHEMA);

/**
 * A channel's health as the admin views show it: the router's view in this process (cooling down,
 * circuit open, credentials refused), with the operator's disable as the read model records it,
 * so that the answer to a PATCH agrees with the PATCH.
 */
function rendered(channel: ChannelView, deps: Pick<ChannelRoutesDeps, 'health' | 'recentCalls'>) {
  return {
    object: 'channel',
    id: channel.name,
    ...channel,
    health: deps.health(channel.name, channel.enabled ? null : (channel.disabled_reason ?? 'disabled by an operator')),
    recent_calls: deps.recentCalls(channel.name),
  };
}

export interface ChannelRoutesDeps {
  readonly channels: ChannelService;
  /** The catalog models that name a channel (a deletion is refused while any does). */
  readonly modelsOn: (channel: string) => readonly string[];
  /** Some of the unfinished tasks a channel accepted (a deletion is refused while there are any). */
  readonly tasksOn: (channel: string) => Promise<readonly string[]>;
  /** One small call through the channel as the log records it (src/upstreams/probe.ts). */
  readonly probe: (channel: string) => Promise<ProbeResult>;
  /**
   * The channel's health as the router of this process sees it (src/upstreams/routing/), with the
   * operator's enabled or disabled state as the read model records it (null: enabled).
   */
  readonly health: (channel: string, disabledByOperator: string | null) => ChannelHealth;
  /** The channel's calls of the last minutes made by this process (src/upstreams/routing/call-stats.ts). */
  readonly recentCalls: (channel: string) => RecentCalls;
}

/** `/admin/v1/channels`: channels managed at run time (docs/operations.md). Mounted behind the admin token. */
export function channelsRouter(deps: ChannelRoutesDeps): Router<GatewayState> {
  const { channels } = deps;
  const router = new Router<GatewayState>({ prefix: '/admin/v1', sensitive: true });
  const current = async (name: string) => {
    const channel = await channels.get(name);
    if (!channel) throw new ApiError(404, 'channel_not_found', `no channel ${name}`);
    return rendered(channel, deps);
  };
  const written = async (name: string) => {
    const channel = await channels.get(name);
    if (!channel) throw new ReadModelBehindError(`channel ${name}`);
    return rendered(channel, deps);
  };

  router.post('/channels', async (ctx) => {
    const entry = parseCreate(await readJson(ctx));
    await channels.create(entry, ADMIN_ACTOR);
    ctx.status = 201;
    ctx.body = await written(entry.name);
  });

  router.get('/channels', async (ctx) => {
    const { after, limit } = pageParams(ctx.query);
    const page = await channels.list(after, limit);
    ctx.body = listBody(page.channels.map((c) => rendered(c, deps)), page.hasMore, (c) => c.id);
  });

  /**
   * Seals every channel's current credentials again under CHANNEL_SECRETS_KEY: the step of a key
   * rotation after which the previous keys can be retired (docs/operations.md).
   */
  router.post('/channels/re-encrypt', async (ctx) => {
    const outcome = await channels.reEncryptAll(ADMIN_ACTOR);
    ctx.body = { re_encrypted: outcome.reEncrypted, unreadable: outcome.unreadable };
  });

  router.get('/channels/:id', async (ctx) => {
    ctx.body = await current(ctx.params.id!);
  });

  router.patch('/channels/:id', async (ctx) => {
    const patch = parsePatch(await readJson(ctx));
    if (patch.reason !== undefined && patch.enabled !== false) throw new ApiError(400, 'invalid_request', 'reason goes with enabled: false', { param: 'reason' });
    await channels.update(ctx.params.id!, patch, ADMIN_ACTOR);
    ctx.body = await written(ctx.params.id!);
  });

  router.delete('/channels/:id', async (ctx) => {
    const name = ctx.params.id!;
    await channels.delete(name, ADMIN_ACTOR, { models: deps.modelsOn(name), tasksOn: deps.tasksOn });
    ctx.body = { object: 'channel', id: name, deleted: true };
  });

  router.post('/channels/:id/test', async (ctx) => {
    const name = ctx.params.id!;
    ctx.body = { object: 'channel_test', channel: name, ...(await deps.probe(name)) };
  });

  router.get('/channels/:id/events', async (ctx) => {
    const { after, limit } = pageParams(ctx.query, (raw) => /^\d{1,9}$/.test(raw));
    const page = await channels.history(ctx.params.id!, after === null ? null : Number(after), limit);
    ctx.body = listBody(page.entries, page.hasMore, (e) => String(e.revision));
  });

  return router;
}
