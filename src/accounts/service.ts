import type { Pool } from 'pg';
import type { Pricing } from '../billing/money';
import { accountDecider, closedOutcomeOf, reachRefusal, type AccountCommand, type AccountState, type ActingKey, type ClosedOutcome } from '../domain/account/decider';
import { accountStream, type AccountEvent, type ChargeChannels, type KeySettings, type ReservationPurpose, type VideoUrlMode } from '../domain/account/events';
import { spentInPeriod } from '../domain/account/key-limits';
import type { CommandHandler, CommandResult } from '../domain/command-handler';
import { entryOf } from '../domain/records';
import { shardedEntry } from '../domain/sharded-record';
import { DomainError } from '../domain/decider';
import type { EventMetadata } from '../eventstore/port';
import { newId } from '../ids';
import { ReadModelBehindError, type ConsumerProgress } from '../projections-runtime/progress';
import { DEFAULT_TIME_ZONE } from './calendar';
import { AccountReports, refIds } from './reports';
import { displayPrefix, generateApiKey, generateWebhookSecret, hashApiKey } from './api-keys';
import type { ApiKeyCache } from './key-cache';

export type AccountCommands = CommandHandler<AccountCommand, AccountEvent, AccountState>;

export interface Balance {
  readonly available: number;
  readonly frozen: number;
  readonly currency: 'CNY';
}

export interface AccountSettings {
  readonly default_video_url_mode: VideoUrlMode;
  /** The IANA zone of statement months and usage days (see accounts/calendar). */
  readonly timezone: string;
}

export interface AccountView {
  readonly id: string;
  readonly name: string;
  readonly balance: Balance;
  readonly settings: AccountSettings;
}

export interface AuthenticatedKey {
  readonly keyId: string;
  readonly accountId: string;
  /** null: the key may use every model. */
  readonly allowedModels: readonly string[] | null;
  /** When the key stops working; null: never. */
  readonly expiresAt: string | null;
  /** The key's own rate in this process; null: the gateway's rate. */
  readonly rateLimitPerMinute: number | null;
  /** The key's tokens-per-minute limit; null: none. */
  readonly tokensPerMinute: number | null;
}

/** A key as its holder and the operator see it; the secret is shown only when issued. */
export interface KeyView {
  readonly id: string;
  readonly name: string | null;
  readonly prefix: string;
  readonly allowed_models: string[] | null;
  readonly budget: { amount: number; period: 'total' | 'day' | 'month'; spent: number; remaining: number } | null;
  readonly expires_at: string | null;
  readonly rate_limit_per_minute: number | null;
  readonly tokens_per_minute: number | null;
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly revoked: boolean;
}

/** Who issues or changes a key: the operator, or an API key of the account (within its own limits). */
export type KeyActor = { readonly keyId: string } | 'admin';

export interface LedgerEntryView {
  readonly id: string;
  readonly sequence: number;
  readonly type: string;
  readonly amount: number;
  readonly available_delta: number;
  readonly frozen_delta: number;
  readonly available_after: number;
  readonly frozen_after: number;
  readonly reservation_id: string | null;
  readonly reference: string | null;
  readonly description: string | null;
  /** The API key that asked (null when the operator or the gateway did, see `actor`). */
  readonly key_id: string | null;
  /** Who asked: an API key id, `admin`, `system` or `unknown` (before this was recorded); null for credits. */
  readonly actor: string | null;
  readonly model: string | null;
  readonly endpoint: string | null;
  readonly request_id: string | null;
  readonly task_id: string | null;
  /** On settlements: the units and unit prices the amount follows from (billing/money Pricing). */
  readonly pricing: Pricing | null;
  readonly created_at: string;
}

/** Which ledger entries to list; every field narrows. */
export interface LedgerFilter {
  readonly keyId?: string;
  readonly model?: string;
  readonly type?: string;
  /** The entries of one synchronous request (its X-Request-Id). */
  readonly requestId?: string;
  readonly from?: Date;
  readonly to?: Date;
}

const LEDGER_VIEWS = ['balances', 'ledger'];

/**
 * Accounts, keys and the prepaid ledger as the HTTP layer and the process managers use them.
 * Writes go through the account decider; reads come from projections, made fresh for the stream
 * they concern (see ConsumerProgress).
 */
export class AccountService {
  constructor(
    private readonly commands: AccountCommands,
    private readonly pool: Pool,
    private readonly progress: ConsumerProgress,
    private readonly options: { projectionWaitMs: number; clock?: () => Date; rateLimitPerMinute?: number; keyCache?: ApiKeyCache<AuthenticatedKey> },
  ) {
    this.reports = new AccountReports(pool, progress, options);
  }

  /** Usage totals and monthly statements. */
  readonly reports: AccountReports;

  private now(): string {
    return (this.options.clock?.() ?? new Date()).toISOString();
  }

  private async run(accountId: string, command: AccountCommand, metadata: EventMetadata, waitFor: readonly string[]): Promise<CommandResult<AccountState, AccountEvent>> {
    const result = await this.commands.handle(accountStream(accountId), command, metadata);
    // A key change takes effect in this process before the command returns, whatever the read model.
    if (result.position) void this.options.keyCache?.keysChanged(result.events, result.position).catch(() => undefined);
    if (result.position && waitFor.length > 0) await this.progress.waitFor(result.position, waitFor, this.options.projectionWaitMs);
    return result;
  }

  async open(name: string, metadata: EventMetadata = {}): Promise<AccountView> {
    const accountId = newId('acct');
    await this.run(accountId, { type: 'OpenAccount', accountId, name, now: this.now() }, metadata, ['accounts', 'balances']);
    return { id: accountId, name, balance: { available: 0, frozen: 0, currency: 'CNY' }, settings: { default_video_url_mode: 'auto', timezone: DEFAULT_TIME_ZONE } };
  }

  async get(accountId: string): Promise<AccountView | null> {
    await this.progress.waitForStream(accountStream(accountId), ['accounts', 'balances'], this.options.projectionWaitMs);
    const { rows } = await this.pool.query<{ name: string; available: string; frozen: string; default_video_url_mode: VideoUrlMode; timezone: string }>(
      `SELECT a.name, a.default_video_url_mode, a.timezone, b.available, b.frozen FROM rm.accounts a JOIN rm.balances b USING (account_id) WHERE a.account_id = $1`,
      [accountId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: accountId,
      name: row.name,
      balance: { available: Number(row.available), frozen: Number(row.frozen), currency: 'CNY' },
      settings: { default_video_url_mode: row.default_video_url_mode, timezone: row.timezone },
    };
  }

  /** Adds prepaid credit; the same reference again returns the first entry and credits nothing. */
  async addCredit(accountId: string, amount: number, reference: string, note: string | null, metadata: EventMetadata = {}): Promise<{ created: boolean; entry: LedgerEntryView }> {
    const entryId = newId('cred');
    const result = await this.run(accountId, { type: 'AddCredit', entryId, amount, reference, note, now: this.now() }, metadata, LEDGER_VIEWS);
    if (!result.position) await this.progress.waitForStream(accountStream(accountId), LEDGER_VIEWS, this.options.projectionWaitMs);
    const { rows } = await this.pool.query<LedgerRow>(`${LEDGER_SELECT} WHERE account_id = $1 AND entry_type = 'credit' AND reference = $2`, [accountId, reference]);
    if (!rows[0]) throw new ReadModelBehindError(`credit ${reference} of ${accountId}`);
    return { created: result.events.length > 0, entry: toLedgerEntry(rows[0]) };
  }

  /**
   * Refunds part or all of a settled charge; the same reference again returns the first entry and
   * refunds nothing. A reservation closed too long ago for the account's state to remember it is
   * refunded against its settlement as the ledger view recorded it (a settlement never changes),
   * and the account's own record of what was refunded keeps the total within the charge.
   */
  async refund(
    accountId: string,
    input: { reservationId: string; amount: number; reference: string; reason: string },
    metadata: EventMetadata = {},
  ): Promise<{ created: boolean; entry: LedgerEntryView }> {
    const caughtUp = await this.awaitLedger(accountId);
    const { rows: found } = await this.pool.query<{
      status: string;
      settled_amount: string | null;
      purpose_kind: 'task' | 'request';
      purpose_ref: string;
      actor: string;
      model: string;
      endpoint: string;
    }>(
      'SELECT status, settled_amount, purpose_kind, purpose_ref, actor, model, endpoint FROM rm.reservations WHERE reservation_id = $1 AND account_id = $2',
      [input.reservationId, accountId],
    );
    const reservation = found[0];
    if (!reservation) throw caughtUp ? new DomainError('reservation_not_found', `reservation ${input.reservationId} not found on this account`) : ledgerBehind(accountId);
    const settledCharge = reservation.status === 'settled' ? Number(reservation.settled_amount) : undefined;
    const context = { actor: reservation.actor, model: reservation.model, endpoint: reservation.endpoint, kind: reservation.purpose_kind, ref: reservation.purpose_ref };
    const result = await this.run(
      accountId,
      {
        type: 'Refund',
        refundId: input.reference,
        reservationId: input.reservationId,
        amount: input.amount,
        reason: input.reason,
        ...(settledCharge !== undefined ? { settledCharge } : {}),
        context,
        now: this.now(),
      },
      metadata,
      LEDGER_VIEWS,
    ).catch((err: unknown) => {
      // A view that is behind may still show open a reservation settled since: when the account
      // no longer remembers that close, the decider has no charge to refund, and that refusal
      // speaks for the lagging view, not for the reservation.
      if (!caughtUp && reservation.status === 'open' && err instanceof DomainError && err.code === 'refund_not_allowed') throw ledgerBehind(accountId);
      throw err;
    });
    if (!result.position) await this.awaitLedger(accountId);
    const { rows } = await this.pool.query<LedgerRow>(`${LEDGER_SELECT} WHERE account_id = $1 AND entry_type = 'refund' AND reference = $2`, [accountId, input.reference]);
    if (!rows[0]) throw new ReadModelBehindError(`refund ${input.reference} of ${accountId}`);
    return { created: result.events.length > 0, entry: toLedgerEntry(rows[0]) };
  }

  async ledger(accountId: string, page: { after: number | null; limit: number }, filter: LedgerFilter = {}): Promise<{ entries: LedgerEntryView[]; hasMore: boolean }> {
    await this.progress.waitForStream(accountStream(accountId), LEDGER_VIEWS, this.options.projectionWaitMs);
    const params: unknown[] = [accountId, page.after ?? -1, page.limit + 1];
    const where = ['account_id = $1', 'revision > $2'];
    const narrow = (column: string, op: string, value: unknown) => {
      params.push(value);
      where.push(`${column} ${op} $${params.length}`);
    };
    if (filter.keyId !== undefined) narrow('actor', '=', filter.keyId);
    if (filter.model !== undefined) narrow('model', '=', filter.model);
    if (filter.requestId !== undefined) {
      where.push(`ref_kind = 'request'`);
      narrow('ref', '=', filter.requestId);
    }
    if (filter.type !== undefined) narrow('entry_type', '=', filter.type);
    if (filter.from !== undefined) narrow('at', '>=', filter.from.toISOString());
    if (filter.to !== undefined) narrow('at', '<', filter.to.toISOString());
    const { rows } = await this.pool.query<LedgerRow>(`${LEDGER_SELECT} WHERE ${where.join(' AND ')} ORDER BY revision LIMIT $3`, params);
    return { entries: rows.slice(0, page.limit).map(toLedgerEntry), hasMore: rows.length > page.limit };
  }

  private acting(by: KeyActor): ActingKey {
    if (by === 'admin') return null;
    const rate = this.options.rateLimitPerMinute ?? 0;
    return { keyId: by.keyId, gatewayRatePerMinute: rate > 0 ? rate : Number.POSITIVE_INFINITY };
  }

  async issueKey(accountId: string, settings: KeySettings, by: KeyActor, metadata: EventMetadata = {}): Promise<KeyView & { key: string }> {
    const key = generateApiKey();
    const keyId = newId('key');
    const { state, events, position } = await this.run(
      accountId,
      { type: 'IssueApiKey', keyId, keyHash: hashApiKey(key), keyPrefix: displayPrefix(key), settings, by: this.acting(by), now: this.now() },
      metadata,
      [],
    );
    // The secret is in this answer alone: a keys view still behind after PROJECTION_WAIT_MS must
    // not turn it into an error that loses it, so the key is then shown as its event records it.
    if (position && (await this.progress.waitFor(position, ['api_keys'], this.options.projectionWaitMs))) return { ...(await this.requireKey(accountId, keyId)), key };
    const issued = events.find((e) => e.type === 'ApiKeyIssued');
    if (!issued) throw new Error(`issuing ${keyId} recorded no ApiKeyIssued`);
    return { ...keyViewOf(issuedKeyRow(issued.data), state, this.now()), key };
  }

  /** Replaces a key's settings (the caller merges a partial change into the current ones). */
  async changeKey(accountId: string, keyId: string, settings: KeySettings, by: KeyActor, metadata: EventMetadata = {}): Promise<KeyView> {
    await this.run(accountId, { type: 'ChangeApiKey', keyId, settings, by: this.acting(by), now: this.now() }, metadata, ['api_keys']);
    return this.requireKey(accountId, keyId);
  }

  /**
   * A new secret for a live key, in place: the same id, limits and spend. The old secret is
   * refused at once here and in every process following the log (ApiKeyCache), and so are the
   * dashboard sessions opened with it (they hold its hash). The secret is shown only here.
   */
  async regenerateKey(accountId: string, keyId: string, by: KeyActor, metadata: EventMetadata = {}): Promise<KeyView & { key: string }> {
    const key = generateApiKey();
    await this.run(
      accountId,
      { type: 'RegenerateApiKeySecret', keyId, keyHash: hashApiKey(key), keyPrefix: displayPrefix(key), by: this.acting(by), now: this.now() },
      metadata,
      ['api_keys'],
    );
    // The prefix of the new secret even if the keys view is still catching up: the secret is shown only now.
    return { ...(await this.requireKey(accountId, keyId)), prefix: displayPrefix(key), key };
  }

  /** The hash of a live (unrevoked) key of the account, or null (another account's, revoked, unknown). */
  async liveKeyHash(accountId: string, keyId: string): Promise<string | null> {
    await this.progress.waitForStream(accountStream(accountId), ['api_keys'], this.options.projectionWaitMs);
    const { rows } = await this.pool.query<{ key_hash: string }>('SELECT key_hash FROM rm.api_keys WHERE key_id = $1 AND account_id = $2 AND revoked_at IS NULL', [keyId, accountId]);
    return rows[0]?.key_hash ?? null;
  }

  /** The account that owns a key (revoked or not), or null. */
  async accountOfKey(keyId: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ account_id: string }>('SELECT account_id FROM rm.api_keys WHERE key_id = $1', [keyId]);
    return rows[0]?.account_id ?? null;
  }

  async revokeKey(keyId: string, by: KeyActor, metadata: EventMetadata = {}): Promise<boolean> {
    const accountId = await this.accountOfKey(keyId);
    if (!accountId) return false;
    await this.run(accountId, { type: 'RevokeApiKey', keyId, by: this.acting(by), now: this.now() }, metadata, ['api_keys']);
    return true;
  }

  /**
   * An account's keys, oldest first. Spend comes from the account's decided state (exactly what
   * the budget check sees); last use from the keys read model.
   */
  async listKeys(accountId: string, keyId?: string): Promise<KeyView[]> {
    return (await this.keysWithState(accountId, keyId)).keys;
  }

  /**
   * The live keys of the account that `by` may reach (itself, and keys no wider when it has no
   * budget: the decider's reachRefusal), oldest first: those the dashboard's playground offers.
   */
  async reachableKeys(accountId: string, by: KeyActor): Promise<KeyView[]> {
    const { keys, state } = await this.keysWithState(accountId);
    return keys.filter((key) => !key.revoked && reachRefusal(state, this.acting(by), key.id) === null);
  }

  /** Refuses (404 key_not_found, 403 key_scope_exceeded) a key that `by` may not reach, by the decider's rule. */
  async requireReachable(accountId: string, keyId: string, by: KeyActor): Promise<void> {
    const { state } = await this.commands.load(accountStream(accountId));
    const refusal = reachRefusal(state, this.acting(by), keyId);
    if (refusal) throw refusal;
  }

  private async keysWithState(accountId: string, keyId?: string): Promise<{ keys: KeyView[]; state: AccountState }> {
    await this.progress.waitForStream(accountStream(accountId), ['api_keys'], this.options.projectionWaitMs);
    const { state } = await this.commands.load(accountStream(accountId));
    const { rows } = await this.pool.query<KeyRow>(
      `SELECT key_id, name, key_prefix, allowed_models, budget, expires_at, rate_limit_per_minute, tokens_per_minute, created_at, last_used_at, revoked_at
       FROM rm.api_keys WHERE account_id = $1 AND ($2::text IS NULL OR key_id = $2) ORDER BY created_at, key_id`,
      [accountId, keyId ?? null],
    );
    const now = this.now();
    return { keys: rows.map((row) => keyViewOf(row, state, now)), state };
  }

  async requireKey(accountId: string, keyId: string): Promise<KeyView> {
    const [key] = await this.listKeys(accountId, keyId);
    if (!key) throw new DomainError('key_not_found', `key ${keyId} not found`);
    return key;
  }

  /** Accounts by name or id (`query`: a case-insensitive part of the name, or the whole id), in id order, for the operator. */
  async listAccounts(query: string | null, page: { after: string | null; limit: number }): Promise<{ accounts: AccountView[]; hasMore: boolean }> {
    const { rows } = await this.pool.query<{ account_id: string; name: string; available: string; frozen: string; default_video_url_mode: VideoUrlMode; timezone: string }>(
      `SELECT a.account_id, a.name, a.default_video_url_mode, a.timezone, b.available, b.frozen FROM rm.accounts a JOIN rm.balances b USING (account_id)
       WHERE ($1::text IS NULL OR a.name ILIKE '%' || $1 || '%' OR a.account_id = $4) AND ($2::text IS NULL OR a.account_id > $2)
       ORDER BY a.account_id LIMIT $3`,
      [query === null ? null : query.replace(/[\\%_]/g, (c) => `\\${c}`), page.after, page.limit + 1, query],
    );
    const accounts = rows.slice(0, page.limit).map((row) => ({
      id: row.account_id,
      name: row.name,
      balance: { available: Number(row.available), frozen: Number(row.frozen), currency: 'CNY' as const },
      settings: { default_video_url_mode: row.default_video_url_mode, timezone: row.timezone },
    }));
    return { accounts, hasMore: rows.length > page.limit };
  }

  /** The key behind a secret, unless revoked; an expired key is returned (the caller refuses it with its own error). */
  async authenticate(key: string): Promise<AuthenticatedKey | null> {
    return this.authenticateHash(hashApiKey(key));
  }

  /** The same, by the key's hash (a dashboard session keeps the hash, never the key). */
  async authenticateHash(keyHash: string): Promise<AuthenticatedKey | null> {
    return this.options.keyCache ? this.options.keyCache.lookup(keyHash, () => this.findKey(keyHash)) : this.findKey(keyHash);
  }

  private async findKey(keyHash: string): Promise<AuthenticatedKey | null> {
    const { rows } = await this.pool.query<{ key_id: string; account_id: string; allowed_models: string[] | null; expires_at: Date | null; rate_limit_per_minute: number | null; tokens_per_minute: number | null }>(
      'SELECT key_id, account_id, allowed_models, expires_at, rate_limit_per_minute, tokens_per_minute FROM rm.api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
      [keyHash],
    );
    const row = rows[0];
    return row
      ? { keyId: row.key_id, accountId: row.account_id, allowedModels: row.allowed_models, expiresAt: row.expires_at?.toISOString() ?? null, rateLimitPerMinute: row.rate_limit_per_minute, tokensPerMinute: row.tokens_per_minute }
      : null;
  }

  async rotateWebhookSecret(accountId: string, metadata: EventMetadata = {}): Promise<string> {
    const secret = generateWebhookSecret();
    await this.run(accountId, { type: 'RotateWebhookSecret', secret, now: this.now() }, metadata, ['accounts']);
    return secret;
  }

  /** Changes the settings given; each change is its own event (a time-zone change also moves statement months, see accounts/calendar). */
  async changeSettings(accountId: string, settings: Partial<AccountSettings>, metadata: EventMetadata = {}): Promise<void> {
    if (settings.default_video_url_mode !== undefined) {
      await this.run(accountId, { type: 'ChangeSettings', defaultVideoUrlMode: settings.default_video_url_mode, now: this.now() }, metadata, ['accounts']);
    }
    if (settings.timezone !== undefined) await this.run(accountId, { type: 'ChangeTimeZone', timezone: settings.timezone, now: this.now() }, metadata, ['accounts', 'usage']);
  }

  async webhookSecret(accountId: string): Promise<string | null> {
    await this.progress.waitForStream(accountStream(accountId), ['accounts'], this.options.projectionWaitMs);
    const { rows } = await this.pool.query<{ webhook_secret: string | null }>('SELECT webhook_secret FROM rm.accounts WHERE account_id = $1', [accountId]);
    return rows[0]?.webhook_secret ?? null;
  }

  /**
   * Freezes `amount` for a purpose. Throws DomainError `insufficient_balance` when the account's
   * available balance is below it. The reservation is open until settle or release; if its owner
   * dies, the reconciler releases it. `accepted` is called when the account has accepted the
   * reservation and its event is being committed (CommandHandler.handle).
   */
  async reserve(
    input: { accountId: string; amount: number; purpose: ReservationPurpose; ttlMs: number; reservationId?: string },
    metadata: EventMetadata = {},
    accepted?: () => void,
  ): Promise<string> {
    const reservationId = input.reservationId ?? newId('rsv');
    const now = this.options.clock?.() ?? new Date();
    await this.commands.handle(
      accountStream(input.accountId),
      {
        type: 'Reserve',
        reservationId,
        amount: input.amount,
        purpose: input.purpose,
        expiresAt: new Date(now.getTime() + input.ttlMs).toISOString(),
        now: now.toISOString(),
      },
      metadata,
      accepted,
    );
    return reservationId;
  }

  /** Whether any of these reservations is open, as the account's stream has it (no read model, which may lag). */
  async anyOpen(accountId: string, reservationIds: readonly string[]): Promise<boolean> {
    if (reservationIds.length === 0) return false;
    const { state } = await this.commands.load(accountStream(accountId));
    return reservationIds.some((id) => shardedEntry(state.open, id) !== undefined);
  }

  /**
   * Charges what `pricing` comes to; a repeated settle or release returns the first outcome.
   * `served`: the upstream channels that served, recorded on the settlement.
   */
  async settle(accountId: string, reservationId: string, pricing: Pricing, usage: Record<string, unknown>, metadata: EventMetadata = {}, served: ChargeChannels = {}): Promise<ClosedOutcome> {
    const command: AccountCommand = { type: 'Settle', reservationId, pricing, usage, served, now: this.now() };
    return this.close(accountId, reservationId, command, metadata);
  }

  async release(accountId: string, reservationId: string, reason: string, metadata: EventMetadata = {}): Promise<ClosedOutcome> {
    return this.close(accountId, reservationId, { type: 'Release', reservationId, reason, now: this.now() }, metadata);
  }

  /**
   * Closes a reservation, or answers how it was closed. The account state only remembers recently
   * closed reservations; an older one (a retry long after the first close) is answered from the
   * ledger view, so a repeated close returns the first outcome however late it comes.
   */
  private async close(accountId: string, reservationId: string, command: AccountCommand, metadata: EventMetadata): Promise<ClosedOutcome> {
    try {
      const result = await this.commands.handle(accountStream(accountId), command, metadata);
      return closedOutcome(result.state, reservationId);
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== 'reservation_not_found') throw err;
      const earlier = await this.closedEarlier(accountId, reservationId);
      if (!earlier) throw err;
      return earlier;
    }
  }

  private async closedEarlier(accountId: string, reservationId: string): Promise<ClosedOutcome | null> {
    const caughtUp = await this.awaitLedger(accountId);
    const { rows } = await this.pool.query<{ status: string; amount: string; settled_amount: string | null; refunded_amount: string; close_reason: string | null }>(
      `SELECT status, amount, settled_amount, refunded_amount, close_reason FROM rm.reservations WHERE reservation_id = $1 AND account_id = $2 AND status <> 'open'`,
      [reservationId, accountId],
    );
    const row = rows[0];
    if (!row && !caughtUp) throw ledgerBehind(accountId);
    if (!row) return null;
    return row.status === 'settled'
      ? { kind: 'settled', amount: Number(row.settled_amount), reservedAmount: Number(row.amount), refunded: Number(row.refunded_amount) }
      : { kind: 'released', amount: Number(row.amount), reason: row.close_reason ?? '' };
  }

  /**
   * Waits until the balance and ledger views reflect everything appended to the account so far;
   * false when they still did not after PROJECTION_WAIT_MS. A caller that finds nothing in a view
   * that is behind must not answer "not found" for it (ledgerBehind).
   */
  awaitLedger(accountId: string): Promise<boolean> {
    return this.progress.waitForStream(accountStream(accountId), LEDGER_VIEWS, this.options.projectionWaitMs);
  }
}

/**
 * The answer when a ledger view that had not caught up with the account lacks what a write must
 * find there first (a reservation missing, or shown open): 503, retry; not 404 or 400, and nothing written.
 */
function ledgerBehind(accountId: string): ReadModelBehindError {
  return new ReadModelBehindError(`the ledger of ${accountId}`, `the ledger of ${accountId} is still catching up, so nothing was written; retry shortly`);
}

function closedOutcome(state: AccountState, reservationId: string): ClosedOutcome {
  const outcome = closedOutcomeOf(state, reservationId);
  if (!outcome) throw new DomainError('reservation_not_found', `reservation ${reservationId} is not closed`);
  return outcome;
}

interface KeyRow {
  key_id: string;
  name: string | null;
  key_prefix: string;
  allowed_models: string[] | null;
  budget: { amount: number; period: 'total' | 'day' | 'month' } | null;
  expires_at: Date | null;
  rate_limit_per_minute: number | null;
  tokens_per_minute: number | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** A key as the api_keys view holds it, with its spend from the account's decided state. */
function keyViewOf(row: KeyRow, state: AccountState, now: string): KeyView {
  const spend = entryOf(state.keys, row.key_id)?.spend;
  const budget = row.budget && spend ? { ...row.budget, spent: spentInPeriod(spend, row.budget.period, now, state.timezone) } : null;
  return {
    id: row.key_id,
    name: row.name,
    prefix: row.key_prefix,
    allowed_models: row.allowed_models,
    budget: budget && { ...budget, remaining: Math.max(0, budget.amount - budget.spent) },
    expires_at: row.expires_at?.toISOString() ?? null,
    rate_limit_per_minute: row.rate_limit_per_minute,
    tokens_per_minute: row.tokens_per_minute,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    revoked: row.revoked_at !== null,
  };
}

/** The api_keys row a key's issue starts (projections/api-keys.ts writes the same from the event). */
function issuedKeyRow(issued: Extract<AccountEvent, { type: 'ApiKeyIssued' }>['data']): KeyRow {
  return {
    key_id: issued.keyId,
    name: issued.name,
    key_prefix: issued.keyPrefix,
    allowed_models: issued.allowedModels,
    budget: issued.budget,
    expires_at: issued.expiresAt === null ? null : new Date(issued.expiresAt),
    rate_limit_per_minute: issued.rateLimitPerMinute,
    tokens_per_minute: issued.tokensPerMinute,
    created_at: new Date(issued.at),
    last_used_at: null,
    revoked_at: null,
  };
}

interface LedgerRow {
  event_id: string;
  revision: string;
  entry_type: string;
  amount: string;
  available_delta: string;
  frozen_delta: string;
  available_after: string;
  frozen_after: string;
  reservation_id: string | null;
  reference: string | null;
  description: string | null;
  actor: string | null;
  model: string | null;
  endpoint: string | null;
  ref_kind: string | null;
  ref: string | null;
  pricing: Pricing | null;
  at: Date;
}

const LEDGER_SELECT = `SELECT event_id, revision, entry_type, amount, available_delta, frozen_delta, available_after, frozen_after,
  reservation_id, reference, description, actor, model, endpoint, ref_kind, ref, pricing, at FROM rm.ledger_entries`;

function toLedgerEntry(row: LedgerRow): LedgerEntryView {
  return {
    id: row.event_id,
    sequence: Number(row.revision),
    type: row.entry_type,
    amount: Number(row.amount),
    available_delta: Number(row.available_delta),
    frozen_delta: Number(row.frozen_delta),
    available_after: Number(row.available_after),
    frozen_after: Number(row.frozen_after),
    reservation_id: row.reservation_id,
    reference: row.reference,
    description: row.description,
    key_id: row.actor !== null && row.actor.startsWith('key_') ? row.actor : null,
    actor: row.actor,
    model: row.model,
    endpoint: row.endpoint,
    ...refIds(row.ref_kind, row.ref),
    pricing: row.pricing,
    created_at: row.at.toISOString(),
  };
}

export { accountDecider };
