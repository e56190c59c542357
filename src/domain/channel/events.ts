/**
 * The events of one channel's stream (`channel-<name>`): the record of what an operator or the
 * start-up seeding did to it. Credentials appear only sealed (AES-256-GCM, src/channels/
 * credential-cipher.ts); the other fields are the channel's settings in CHANNELS' own spelling.
 */

/**
 * Provider credentials as the log holds them: ciphertext, and the id of the key that sealed it, so
 * a process holding several keys (a rotation of CHANNEL_SECRETS_KEY under way) knows which one
 * opens it.
 */
export interface SealedCredentials {
  readonly key_id: string;
  /** `iv.tag.ciphertext`, each base64url. */
  readonly ciphertext: string;
}

/** How the channel authenticates: a ChannelAuth kind (`none`, `bearer`, `headers`, `volcengine`, `acs3`). */
export type AuthKind = 'none' | 'bearer' | 'headers' | 'volcengine' | 'acs3';

/** The settings of a channel that are not secret. */
export interface ChannelSettings {
  readonly protocol: string;
  readonly base_url: string;
  readonly timeout_ms: number;
  readonly max_concurrency: number;
}

export const SETTING_FIELDS = ['protocol', 'base_url', 'timeout_ms', 'max_concurrency'] as const;

/** Who acted: `admin-token` (the admin API), `config` (seeding from CHANNELS); a later issue adds named operators. */
export type ChannelActor = string;

interface Acted {
  readonly name: string;
  readonly actor: ChannelActor;
  readonly at: string;
}

export type ChannelEvent =
  | { type: 'ChannelCreated'; data: Acted & ChannelSettings & { auth_kind: AuthKind; credentials: SealedCredentials | null } }
  /** Only the settings that changed, with their new values. */
  | { type: 'ChannelChanged'; data: Acted & { changes: Partial<ChannelSettings> } }
  | { type: 'ChannelCredentialsRotated'; data: Acted & { auth_kind: AuthKind; credentials: SealedCredentials | null } }
  /** The same credentials sealed again under the current CHANNEL_SECRETS_KEY, so an older key can be retired. */
  | { type: 'ChannelCredentialsReEncrypted'; data: Acted & { credentials: SealedCredentials } }
  /** Enabled, or mended when it was enabled already: each process's router forgets the channel's health. */
  | { type: 'ChannelEnabled'; data: Acted }
  | { type: 'ChannelDisabled'; data: Acted & { reason: string } }
  | { type: 'ChannelDeleted'; data: Acted };

export const CHANNEL_EVENT_TYPES: ReadonlySet<string> = new Set<ChannelEvent['type']>([
  'ChannelCreated',
  'ChannelChanged',
  'ChannelCredentialsRotated',
  'ChannelCredentialsReEncrypted',
  'ChannelEnabled',
  'ChannelDisabled',
  'ChannelDeleted',
]);

export function isChannelEvent<E extends { readonly type: string }>(event: E): event is E & ChannelEvent {
  return CHANNEL_EVENT_TYPES.has(event.type);
}

const STREAM_PREFIX = 'channel-';

/** The stream of the channel named `name`: the name is the id, as the catalog names channels. */
export function channelStream(name: string): string {
  return STREAM_PREFIX + name;
}
