import { DomainError, type Decider } from '../decider';
import { withChanges } from '../with-changes';
import { SETTING_FIELDS, type AuthKind, type ChannelActor, type ChannelEvent, type ChannelSettings, type SealedCredentials } from './events';

/**
 * One provider channel as an operator manages it: created (by the admin API or by seeding from
 * CHANNELS), its settings changed, its credentials rotated or sealed again under a newer key,
 * enabled, disabled and deleted. Deleting ends the channel, not its stream: the history stays, and
 * a channel of the same name created later continues the same stream.
 */
export interface ChannelState {
  /** Created and not deleted since. */
  readonly live: boolean;
  /** Whether the stream has ever held a ChannelCreated (a deleted channel still has). */
  readonly everCreated: boolean;
  readonly settings: ChannelSettings | null;
  readonly authKind: AuthKind;
  readonly credentials: SealedCredentials | null;
  readonly enabled: boolean;
  readonly disabledReason: string | null;
  readonly createdAt: string | null;
  readonly credentialsRotatedAt: string | null;
}

/** New credentials, already sealed (the decider never sees a credential in clear). */
export interface CredentialsChange {
  readonly authKind: AuthKind;
  readonly credentials: SealedCredentials | null;
}

interface Acting {
  readonly name: string;
  readonly actor: ChannelActor;
  readonly at: string;
}

export type ChannelCommand =
  /** `ifAbsent`: seeding, where a channel the log already holds (or held and deleted) is left as the log says. */
  | (Acting & { kind: 'create'; settings: ChannelSettings; auth: CredentialsChange; enabled: boolean; ifAbsent: boolean })
  /**
   * Any of: settings to change, new credentials, enabled (always recorded: it mends) or disabled
   * (with a reason). Only what the operator asked for: a command retried after another writer's
   * append must not write back the other settings as they were when it was made.
   */
  | (Acting & { kind: 'update'; settings: Partial<ChannelSettings>; auth: CredentialsChange | null; enabled: { value: boolean; reason: string } | null })
  /** `replaces`: the ciphertext that was opened and sealed again; credentials rotated since are left alone. */
  | (Acting & { kind: 'reEncrypt'; credentials: SealedCredentials; replaces: string })
  | (Acting & { kind: 'delete' });

const initialState = (): ChannelState => ({
  live: false,
  everCreated: false,
  settings: null,
  authKind: 'none',
  credentials: null,
  enabled: false,
  disabledReason: null,
  createdAt: null,
  credentialsRotatedAt: null,
});

function decide(command: ChannelCommand, state: ChannelState): ChannelEvent[] {
  const acted = { name: command.name, actor: command.actor, at: command.at };
  if (command.kind === 'create') {
    if (command.ifAbsent && state.everCreated) return [];
    if (state.live) throw new DomainError('channel_exists', `channel ${command.name} exists`, { param: 'name' });
    const created: ChannelEvent = { type: 'ChannelCreated', data: Object.assign({}, acted, command.settings, { auth_kind: command.auth.authKind, credentials: command.auth.credentials }) };
    return command.enabled ? [created] : [created, { type: 'ChannelDisabled', data: Object.assign({}, acted, { reason: 'created disabled' }) }];
  }
  if (!state.live) throw new DomainError('channel_not_found', `no channel ${command.name}`);
  switch (command.kind) {
    case 'update': {
      const events: ChannelEvent[] = [];
      const changes = changedSettings(state.settings!, command.settings);
      if (Object.keys(changes).length > 0) events.push({ type: 'ChannelChanged', data: Object.assign({}, acted, { changes }) });
      if (command.auth) events.push({ type: 'ChannelCredentialsRotated', data: Object.assign({}, acted, { auth_kind: command.auth.authKind, credentials: command.auth.credentials }) });
      const enabled = command.enabled;
      // Enabling an enabled channel is an operator's mend, not a no-op: every process forgets what
      // its router learnt of the channel (refused credentials, an open circuit, a cooldown).
      if (enabled && enabled.value) events.push({ type: 'ChannelEnabled', data: acted });
      if (enabled && !enabled.value && (state.enabled || state.disabledReason !== enabled.reason)) events.push({ type: 'ChannelDisabled', data: Object.assign({}, acted, { reason: enabled.reason }) });
      return events;
    }
    case 'reEncrypt':
      // A rotation that landed after the credentials were read must not be undone by sealing the old ones again.
      if (!state.credentials || state.credentials.ciphertext !== command.replaces || state.credentials.key_id === command.credentials.key_id) return [];
      return [{ type: 'ChannelCredentialsReEncrypted', data: Object.assign({}, acted, { credentials: command.credentials }) }];
    case 'delete':
      return [{ type: 'ChannelDeleted', data: acted }];
  }
}

/** The settings of `wanted` that differ from `current`, in field order. */
function changedSettings(current: ChannelSettings, wanted: Partial<ChannelSettings>): Partial<ChannelSettings> {
  const changes: Record<string, unknown> = {};
  for (const field of SETTING_FIELDS) if (wanted[field] !== undefined && wanted[field] !== current[field]) changes[field] = wanted[field];
  return changes as Partial<ChannelSettings>;
}

function evolve(state: ChannelState, event: ChannelEvent): ChannelState {
  switch (event.type) {
    case 'ChannelCreated': {
      const { protocol, base_url, timeout_ms, max_concurrency, auth_kind, credentials, at } = event.data;
      return {
        live: true,
        everCreated: true,
        settings: { protocol, base_url, timeout_ms, max_concurrency },
        authKind: auth_kind,
        credentials,
        enabled: true,
        disabledReason: null,
        createdAt: at,
        credentialsRotatedAt: credentials ? at : null,
      };
    }
    case 'ChannelChanged':
      return withChanges(state, { settings: Object.assign({}, state.settings!, event.data.changes) });
    case 'ChannelCredentialsRotated':
      return withChanges(state, { authKind: event.data.auth_kind, credentials: event.data.credentials, credentialsRotatedAt: event.data.at });
    case 'ChannelCredentialsReEncrypted':
      return withChanges(state, { credentials: event.data.credentials });
    case 'ChannelEnabled':
      return withChanges(state, { enabled: true, disabledReason: null });
    case 'ChannelDisabled':
      return withChanges(state, { enabled: false, disabledReason: event.data.reason });
    case 'ChannelDeleted':
      return withChanges(initialState(), { everCreated: true });
    default:
      // Another writer's event on a stream of this name (none is expected) changes nothing of the channel.
      return state;
  }
}

export const channelDecider: Decider<ChannelCommand, ChannelEvent, ChannelState> = {
  initialState,
  decide,
  evolve,
  snapshotVersion: 1,
};
