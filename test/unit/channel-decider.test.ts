import { channelDecider, type ChannelCommand } from '../../src/domain/channel/decider';
import type { ChannelEvent, SealedCredentials } from '../../src/domain/channel/events';
import { DeciderSpecification } from '../support/decider-specification';

const given = DeciderSpecification.for(channelDecider);
const AT = '2026-12-05T10:00:00.000Z';
const SEALED: SealedCredentials = { key_id: 'k1', ciphertext: 'iv.tag.body' };
const RESEALED: SealedCredentials = { key_id: 'k2', ciphertext: 'iv2.tag2.body2' };
const SETTINGS = { protocol: 'openai', base_url: 'https://api.openai.com/v1', timeout_ms: 60_000, max_concurrency: 64 };
const acted = (actor = 'admin-token') => ({ name: 'backup', actor, at: AT });

const create = (over: Partial<Extract<ChannelCommand, { kind: 'create' }>> = {}): ChannelCommand => ({
  kind: 'create',
  ...acted(),
  settings: SETTINGS,
  auth: { authKind: 'bearer', credentials: SEALED },
  enabled: true,
  ifAbsent: false,
  ...over,
});
const update = (over: Partial<Extract<ChannelCommand, { kind: 'update' }>>): ChannelCommand => ({ kind: 'update', ...acted(), settings: {}, auth: null, enabled: null, ...over });

const created: ChannelEvent = { type: 'ChannelCreated', data: { ...acted(), ...SETTINGS, auth_kind: 'bearer', credentials: SEALED } };
const deleted: ChannelEvent = { type: 'ChannelDeleted', data: acted() };

describe('the channel decider', () => {
  it('creates a channel, disabled at once when asked', () => {
    given([]).when(create()).then([created]);
    given([]).when(create({ enabled: false })).then([created, { type: 'ChannelDisabled', data: { ...acted(), reason: 'created disabled' } }]);
  });

  it('refuses a second creation from the API, and seeding leaves a channel the log holds or held as it is', () => {
    given([created]).when(create()).thenThrows('channel_exists');
    given([created]).when(create({ ifAbsent: true, actor: 'config' })).thenNothingHappened();
    given([created, deleted]).when(create({ ifAbsent: true, actor: 'config' })).thenNothingHappened();
  });

  it('creates a deleted channel again on the same stream, from the API', () => {
    given([created, deleted]).when(create()).then([created]);
  });

  it('records only the settings that change, then the rotation and the enabled state, in one decision', () => {
    given([created])
      .when(update({ settings: { ...SETTINGS, timeout_ms: 5000 }, auth: { authKind: 'bearer', credentials: RESEALED }, enabled: { value: false, reason: 'maintenance' } }))
      .then([
        { type: 'ChannelChanged', data: { ...acted(), changes: { timeout_ms: 5000 } } },
        { type: 'ChannelCredentialsRotated', data: { ...acted(), auth_kind: 'bearer', credentials: RESEALED } },
        { type: 'ChannelDisabled', data: { ...acted(), reason: 'maintenance' } },
      ]);
    given([created]).when(update({ settings: SETTINGS })).thenNothingHappened();
  });

  it('records an enable of an enabled channel too: it is the operator\'s mend of what the routers learnt of it', () => {
    given([created]).when(update({ settings: SETTINGS, enabled: { value: true, reason: 'x' } })).then([{ type: 'ChannelEnabled', data: acted() }]);
  });

  it('enables a disabled channel once', () => {
    const disabled: ChannelEvent = { type: 'ChannelDisabled', data: { ...acted(), reason: 'maintenance' } };
    given([created, disabled]).when(update({ enabled: { value: true, reason: '' } })).then([{ type: 'ChannelEnabled', data: acted() }]);
    given([created, disabled]).when(update({ enabled: { value: false, reason: 'maintenance' } })).thenNothingHappened();
  });

  it('seals current credentials again only when they are under another key', () => {
    given([created]).when({ kind: 'reEncrypt', ...acted(), credentials: RESEALED, replaces: SEALED.ciphertext }).then([{ type: 'ChannelCredentialsReEncrypted', data: { ...acted(), credentials: RESEALED } }]);
    given([created]).when({ kind: 'reEncrypt', ...acted(), credentials: { key_id: 'k1', ciphertext: 'other' }, replaces: SEALED.ciphertext }).thenNothingHappened();
  });

  it('leaves credentials rotated after the re-encrypted ones were read as they are', () => {
    const rotated: ChannelEvent = { type: 'ChannelCredentialsRotated', data: { ...acted(), auth_kind: 'bearer', credentials: { key_id: 'k1', ciphertext: 'iv3.tag3.rotated' } } };
    given([created, rotated]).when({ kind: 'reEncrypt', ...acted(), credentials: RESEALED, replaces: SEALED.ciphertext }).thenNothingHappened();
  });

  it('refuses changes to a channel that does not exist or was deleted', () => {
    given([]).when(update({ enabled: { value: false, reason: 'x' } })).thenThrows('channel_not_found');
    given([created, deleted]).when({ kind: 'delete', ...acted() }).thenThrows('channel_not_found');
  });
});
