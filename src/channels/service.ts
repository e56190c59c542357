import type { Pool } from 'pg';
import { channelConfigs, ConfigError } from '../config';
import type { ChannelEntry } from '../upstreams/registry';
import { type ChannelCommand, type ChannelState, type CredentialsChange } from '../domain/channel/decider';
import { channelStream, SETTING_FIELDS, type ChannelEvent, type ChannelSettings } from '../domain/channel/events';
import { DomainError } from '../domain/decider';
import type { CommandHandler } from '../domain/command-handler';
import type { EventStore } from '../eventstore/port';
import { ReadModelBehindError, type ConsumerProgress } from '../projections-runtime/progress';
import type { ChannelAuth, ChannelConfig } from '../upstreams/channel';
import { CredentialsUnreadableError, type CredentialCipher } from './credential-cipher';

export type ChannelCommands = CommandHandler<ChannelCommand, ChannelEvent, ChannelState>;

/** The fields of a channels entry that carry a credential; each selects an authentication strategy. */
const CREDENTIAL_FIELDS = ['api_key', 'headers', 'volcengine', 'alibaba'] as const;

/** A channel as the admin API answers it: never any part of a credential. */
export interface ChannelView {
  readonly name: string;
  readonly protocol: string;
  readonly base_url: string;
  readonly timeout_ms: number;
  readonly max_concurrency: number;
  readonly auth_kind: string;
  readonly credentials_key_id: string | null;
  readonly credentials_rotated_at: string | null;
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

/** One event of a channel's history, for the operator: never a credential, only that one was set. */
export interface ChannelHistoryEntry {
  readonly revision: number;
  readonly type: string;
  readonly actor: string;
  readonly at: string;
  readonly changes: Readonly<Record<string, unknown>>;
}

/** What PATCH may change: the settings, new credentials (one credential field), enabled and the reason of a disable. */
export interface ChannelPatch extends Partial<Omit<ChannelEntry, 'name'>> {
  readonly enabled?: boolean;
  readonly reason?: string;
}

/**
 * Channels as an operator manages them, each a stream of events (src/domain/channel): what the
 * admin API and the start-up seeding call. Credentials are sealed (CredentialCipher) before any
 * command sees them, and opened only to build a channel's config.
 */
export class ChannelService {
  constructor(
    private readonly commands: ChannelCommands,
    private readonly store: EventStore,
    private readonly pool: Pool,
    private readonly cipher: CredentialCipher,
    private readonly clock: () => Date,
    /** The admin answers read the channels read model: a write waits this long for it (PROJECTION_WAIT_MS). */
    private readonly readYourWrites: { readonly progress: ConsumerProgress; readonly waitMs: number },
  ) {}

  /** Runs a command and waits for the channels read model to fold what it appended. */
  private async run(name: string, command: ChannelCommand): Promise<{ appended: boolean }> {
    const result = await this.commands.handle(channelStream(name), command);
    if (result.position) await this.readYourWrites.progress.waitFor(result.position, ['channels'], this.readYourWrites.waitMs);
    return { appended: result.events.length > 0 };
  }

  /** Creates a channel from an entry in CHANNELS' format, checked as CHANNELS is. */
  async create(entry: ChannelEntry & { readonly enabled?: boolean }, actor: string): Promise<void> {
    const { enabled, ...fields } = entry;
    const config = validated(fields);
    await this.run(config.name, {
      kind: 'create',
      name: config.name,
      actor,
      at: this.now(),
      settings: settingsOf(config),
      auth: this.sealed(config.name, config.auth),
      enabled: enabled ?? true,
      ifAbsent: false,
    });
  }

  /**
   * Applies a PATCH: the merged entry is checked as CHANNELS is (a protocol change must still suit
   * the credentials), new credentials are sealed, and the changes are one append.
   */
  async update(name: string, patch: ChannelPatch, actor: string): Promise<void> {
    const state = await this.live(name);
    const { enabled, reason, ...fields } = patch;
    const givesCredentials = CREDENTIAL_FIELDS.some((field) => fields[field] !== undefined);
    const credentials = givesCredentials ? {} : entryAuthOf(this.authOf(name, state));
    const config = validated({ ...state.settings!, ...credentials, ...fields, name });
    const settings = settingsOf(config);
    await this.run(name, {
      kind: 'update',
      name,
      actor,
      at: this.now(),
      // Only the settings the patch names (as validated): the others, as read above, may be stale by the time the command is decided.
      settings: Object.fromEntries(SETTING_FIELDS.filter((field) => fields[field] !== undefined).map((field) => [field, settings[field]])),
      auth: givesCredentials ? this.sealed(name, config.auth) : null,
      enabled: enabled === undefined ? null : { value: enabled, reason: reason ?? 'disabled by an operator' },
    });
  }

  /**
   * Deletes a channel no catalog model names (`inUse.models` lists the models that do) and no
   * unfinished task lives on (`inUse.tasksOn`, read once the tasks read model has folded the log's
   * head: their polls and cancels go to that channel alone); its history stays.
   */
  async delete(name: string, actor: string, inUse: { readonly models: readonly string[]; readonly tasksOn: (channel: string) => Promise<readonly string[]> }): Promise<void> {
    await this.live(name);
    const models = inUse.models;
    if (models.length > 0) {
      throw new DomainError('channel_in_use', `channel ${name} serves catalog models ${models.join(', ')}: change the catalog first, or disable the channel`, { models });
    }
    await this.folded(['tasks'], 'the tasks on the channel');
    const tasks = await inUse.tasksOn(name);
    if (tasks.length > 0) {
      throw new DomainError('channel_in_use', `channel ${name} holds unfinished tasks ${tasks.join(', ')}: their provider tasks live there alone; delete it once they have finished`, { tasks });
    }
    await this.run(name, { kind: 'delete', name, actor, at: this.now() });
  }

  /** Waits until the read models `views` have folded the log's head (a 503 ReadModelBehindError naming `what` when they do not in time). */
  private async folded(views: string[], what: string): Promise<void> {
    if (!(await this.readYourWrites.progress.waitForCommitted(views, this.readYourWrites.waitMs))) throw new ReadModelBehindError(what);
  }

  /**
   * Seals every live channel's current credentials again under CHANNEL_SECRETS_KEY (one event per
   * channel whose credentials are under another key); answers the channels sealed again. After
   * it, no current credentials need an older key: only the latest credentials event is ever opened.
   */
  async reEncryptAll(actor: string): Promise<{ reEncrypted: string[]; unreadable: string[] }> {
    const reEncrypted: string[] = [];
    const unreadable: string[] = [];
    for (const name of await this.names()) {
      const outcome = await this.reEncrypt(name, actor);
      if (outcome === 're-encrypted') reEncrypted.push(name);
      if (outcome === 'unreadable') unreadable.push(name);
    }
    return { reEncrypted, unreadable };
  }

  /**
   * Seals one channel's current credentials again under the current key. The command names the
   * ciphertext it replaces: when credentials were rotated in between (the decider then appends
   * nothing), the channel is read again and its new credentials are looked at in turn.
   */
  private async reEncrypt(name: string, actor: string): Promise<'re-encrypted' | 'unreadable' | 'current'> {
    for (;;) {
      const state = (await this.load(name)).state;
      if (!state.live || !state.credentials || state.credentials.key_id === this.cipher.currentKeyId) return 'current';
      let plaintext: string;
      try {
        plaintext = this.cipher.open(name, state.credentials);
      } catch (err) {
        if (!(err instanceof CredentialsUnreadableError)) throw err;
        return 'unreadable';
      }
      const command = { kind: 'reEncrypt', name, actor, at: this.now(), credentials: this.cipher.seal(name, plaintext), replaces: state.credentials.ciphertext } as const;
      if ((await this.run(name, command)).appended) return 're-encrypted';
    }
  }

  /**
   * Seeds the log from CHANNELS at start: a channel the log has never held is created (actor
   * `config`); one it holds, or held and deleted, stays as the log says. Answers, per channel the
   * log kept, the non-secret fields where CHANNELS differs and whether its credentials differ, for
   * a warning. Several processes seeding at once append with expected versions: one creates.
   */
  async seed(configs: readonly ChannelConfig[]): Promise<{ name: string; deleted: boolean; differing: string[] }[]> {
    const kept: { name: string; deleted: boolean; differing: string[] }[] = [];
    for (const config of configs) {
      const result = await this.commands.handle(channelStream(config.name), {
        kind: 'create',
        name: config.name,
        actor: 'config',
        at: this.now(),
        settings: settingsOf(config),
        auth: this.sealed(config.name, config.auth),
        enabled: true,
        ifAbsent: true,
      });
      if (result.events.length > 0) continue;
      const state = result.state;
      if (!state.live) {
        kept.push({ name: config.name, deleted: true, differing: [] });
        continue;
      }
      const differing: string[] = SETTING_FIELDS.filter((field) => state.settings![field] !== config[field]);
      if (!this.sameCredentials(config.name, state, config.auth)) differing.push('credentials');
      if (differing.length > 0) kept.push({ name: config.name, deleted: false, differing });
    }
    return kept;
  }

  /** A channel's state, read from its stream. */
  load(name: string): Promise<{ state: ChannelState; revision: number }> {
    return this.commands.load(channelStream(name));
  }

  /** A live channel's config as the log records it now (404 and 409 `credentials_unreadable` as DomainErrors). */
  async currentConfig(name: string): Promise<ChannelConfig> {
    return this.configOf(name, await this.live(name));
  }

  /** The config a live channel serves with, its credentials opened (a DomainError `credentials_unreadable` when they cannot be). */
  configOf(name: string, state: ChannelState): ChannelConfig {
    return { name, ...state.settings!, auth: this.authOf(name, state) };
  }

  /**
   * Every channel the log holds, deleted ones included, from the read model once it has folded the
   * log's head (a channel seeded at start is not waited for, so the read model may lag behind it).
   */
  async names(): Promise<string[]> {
    await this.folded(['channels'], 'the channel list');
    return this.namesFolded();
  }

  /** The channels the read model has folded so far, deleted ones included (its caller knows how far it is). */
  async namesFolded(): Promise<string[]> {
    const { rows } = await this.pool.query<{ name: string }>('SELECT name FROM rm.channels ORDER BY name');
    return rows.map((r) => r.name);
  }

  /** Live channels in name order, after `after`, at most `limit` (and whether there are more). */
  async list(after: string | null, limit: number): Promise<{ channels: ChannelView[]; hasMore: boolean }> {
    const { rows } = await this.pool.query<ChannelRow>(`${VIEW_SELECT} WHERE deleted_at IS NULL AND ($1::text IS NULL OR name > $1) ORDER BY name LIMIT $2`, [after, limit + 1]);
    return { channels: rows.slice(0, limit).map(viewOf), hasMore: rows.length > limit };
  }

  async get(name: string): Promise<ChannelView | null> {
    const { rows } = await this.pool.query<ChannelRow>(`${VIEW_SELECT} WHERE deleted_at IS NULL AND name = $1`, [name]);
    return rows[0] ? viewOf(rows[0]) : null;
  }

  /** The channel's history from the log (deleted channels' too), after revision `after`. */
  async history(name: string, after: number | null, limit: number): Promise<{ entries: ChannelHistoryEntry[]; hasMore: boolean }> {
    const events = await this.store.readStream(channelStream(name), { fromRevision: after === null ? 0 : after + 1, maxCount: limit + 1 });
    if (events.length === 0 && after === null) throw new DomainError('channel_not_found', `no channel ${name}`);
    const entries = events.slice(0, limit).map((e) => historyEntryOf(e.revision, { type: e.type, data: e.data } as ChannelEvent));
    return { entries, hasMore: events.length > limit };
  }

  private async live(name: string): Promise<ChannelState> {
    const { state } = await this.load(name);
    if (!state.live) throw new DomainError('channel_not_found', `no channel ${name}`);
    return state;
  }

  private authOf(name: string, state: ChannelState): ChannelAuth {
    if (!state.credentials) return { kind: 'none' };
    try {
      return JSON.parse(this.cipher.open(name, state.credentials)) as ChannelAuth;
    } catch (err) {
      if (err instanceof CredentialsUnreadableError) throw new DomainError('credentials_unreadable', err.message);
      throw err;
    }
  }

  private sameCredentials(name: string, state: ChannelState, auth: ChannelAuth): boolean {
    try {
      return JSON.stringify(this.authOf(name, state)) === JSON.stringify(auth);
    } catch {
      return false;
    }
  }

  private sealed(name: string, auth: ChannelAuth): CredentialsChange {
    return { authKind: auth.kind, credentials: auth.kind === 'none' ? null : this.cipher.seal(name, JSON.stringify(auth)) };
  }

  private now(): string {
    return this.clock().toISOString();
  }
}

/**
 * The entry checked exactly as CHANNELS is (channelConfigs); a refusal is a 400 naming the field,
 * in CHANNELS' words without its `source[0]` prefix (channelConfigs never echoes a credential).
 */
function validated(entry: Record<string, unknown>): ChannelConfig {
  try {
    return channelConfigs([entry], 'channel')[0]!;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const field = /^channel\[0\]\.([a-z_]+)/.exec(err.message)?.[1];
    const message = err.message.replace(/^channel\[0\](\.|: )/, '');
    throw new DomainError('invalid_request', message, field ? { param: field } : {});
  }
}

function settingsOf(config: ChannelConfig): ChannelSettings {
  return { protocol: config.protocol, base_url: config.base_url, timeout_ms: config.timeout_ms, max_concurrency: config.max_concurrency };
}

/** The credential field of a channels entry that gives `auth` (the inverse of config.ts's channelAuth). */
function entryAuthOf(auth: ChannelAuth): Partial<ChannelEntry> {
  switch (auth.kind) {
    case 'none':
      return {};
    case 'bearer':
      return { api_key: auth.apiKey };
    case 'headers':
      return { headers: auth.headers };
    case 'volcengine': {
      const c = auth.credentials;
      return { volcengine: { access_key_id: c.accessKeyId, secret_access_key: c.secretAccessKey, region: c.region, service: c.service, ...(c.sessionToken ? { session_token: c.sessionToken } : {}) } };
    }
    case 'acs3':
      return { alibaba: { access_key_id: auth.credentials.accessKeyId, access_key_secret: auth.credentials.accessKeySecret } };
  }
}

/** What an event changed, for the history: settings by value, credentials only as `set` with their kind. */
function historyEntryOf(revision: number, event: ChannelEvent): ChannelHistoryEntry {
  const { actor, at } = event.data;
  const entry = (changes: Record<string, unknown>) => ({ revision, type: event.type, actor, at, changes });
  switch (event.type) {
    case 'ChannelCreated': {
      const d = event.data;
      return entry({ protocol: d.protocol, base_url: d.base_url, timeout_ms: d.timeout_ms, max_concurrency: d.max_concurrency, auth_kind: d.auth_kind, credentials: d.credentials ? 'set' : 'none' });
    }
    case 'ChannelChanged':
      return entry({ ...event.data.changes });
    case 'ChannelCredentialsRotated':
      return entry({ auth_kind: event.data.auth_kind, credentials: event.data.credentials ? 'rotated' : 'none' });
    case 'ChannelCredentialsReEncrypted':
      return entry({ credentials_key_id: event.data.credentials.key_id });
    case 'ChannelEnabled':
      return entry({ enabled: true });
    case 'ChannelDisabled':
      return entry({ enabled: false, reason: event.data.reason });
    case 'ChannelDeleted':
      return entry({ deleted: true });
  }
}

interface ChannelRow {
  name: string;
  protocol: string;
  base_url: string;
  timeout_ms: number;
  max_concurrency: number;
  auth_kind: string;
  credentials_key_id: string | null;
  credentials_rotated_at: Date | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

const VIEW_SELECT = `SELECT name, protocol, base_url, timeout_ms, max_concurrency, auth_kind, credentials_key_id, credentials_rotated_at, enabled, disabled_reason, created_at, updated_at FROM rm.channels`;

function viewOf(row: ChannelRow): ChannelView {
  return {
    ...row,
    credentials_rotated_at: row.credentials_rotated_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
