import { createHash } from 'node:crypto';
import type { EventStore } from '../eventstore/port';
import { WrongExpectedVersionError } from '../eventstore/port';
import type { GatewayContext } from '../http/context';
import { DomainError } from '../domain/decider';
import { recordFact } from '../domain/facts';

/**
 * `Idempotency-Key` on task creation: the same key with the same body within 24 hours returns the
 * first task and freezes nothing new; with another body, 400 `idempotency_key_reused`. A request
 * claims its key (an append to the key's own stream with an expected version) before any money
 * moves, so of two concurrent requests exactly one reserves; the other answers 429 until the
 * winner's task exists, and then replays it.
 *
 * A claim is a lease: its holder (the request) has the key until `leaseUntil`, and the 429 says
 * how long that is (Retry-After). A holder that crashed leaves its claim behind; once the lease has
 * run out another request takes the key over. Every claim of a key within its window names the
 * same task stream, the one the first claim chose, so a holder that was only slow and still
 * records its task after a takeover cannot make a second task: the task stream is recorded once
 * (TaskEngine.create's Submit), and whichever holder comes second releases its own reservation
 * and answers the task the other one recorded.
 *
 * A holder records its task only while its claim is the key's latest event (`holds`, asked after
 * it reserved): one whose key was taken over or released meanwhile frees its money and answers
 * what the key holds now. A claim names the reservation its holder makes, so a request that fails
 * before recording while an earlier claim's reservation is still open (its holder may yet pass
 * that check and record) answers 429, never a final refusal for a task that then gets recorded.
 */
const WINDOW_MS = 24 * 3_600_000;

interface Claim {
  readonly taskStream: string;
  readonly requestHash: string;
  readonly at: string;
  /** The request holding the key (absent in claims recorded before leases). */
  readonly holder?: string;
  /** Absent in claims recorded before leases: `at` plus the lease. */
  readonly leaseUntil?: string;
  /** The reservation its holder makes (absent in claims recorded before fencing). */
  readonly reservationId?: string;
}

/** The client retries after `retryAfterSeconds` (src/http/errors.ts answers 429 with Retry-After). */
const inProgress = (retryAfterSeconds: number) =>
  new DomainError('idempotent_request_in_progress', 'a request with this Idempotency-Key is still being processed; retry after the Retry-After seconds', { retryAfterSeconds });

export function requestHash(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

/** `Idempotency-Key` of a create call, with the hash of its raw body; null without the header. */
export function idempotencyOf(ctx: GatewayContext): { key: string; hash: string } | null {
  const key = ctx.get('idempotency-key');
  if (!key) return null;
  if (key.length > 255) throw new DomainError('invalid_idempotency_key', 'Idempotency-Key is at most 255 characters', { param: 'Idempotency-Key' });
  return { key, hash: requestHash(ctx.state.rawBody) };
}

export function idempotencyKeyStream(accountId: string, key: string): string {
  return `idem-${accountId}-${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}

/**
 * A free key: the revision to claim it at, the task stream an earlier claim within the window
 * chose (null: none) and the reservations earlier claims of that task stream named.
 */
type KeyLookup = { kind: 'free'; expectedVersion: number | 'no_stream'; taskStream: string | null; earlierReservations: string[] } | { kind: 'replay'; taskStream: string };

/**
 * The outcome of claiming a key: the request goes on to record the task `taskStream` while it
 * `holds` the key (and must `release` if it stops before the task exists), or replays.
 * `earlierReservations`: those of the claims before it on the same task stream.
 */
export type KeyClaim = { kind: 'claimed'; revision: number; taskStream: string; earlierReservations: readonly string[] } | { kind: 'replay'; taskStream: string };

export class IdempotencyKeys {
  constructor(
    private readonly store: EventStore,
    private readonly clock: () => Date,
    /** How long a claim holds the key before another request may take it over. */
    private readonly leaseMs: number,
  ) {}

  /**
   * Claims the key for `holder`, which reserves as `reservationId`, to record the task
   * `taskStream` (or the one an earlier claim of the key chose), or answers the task an earlier
   * request made. Throws 400 for another body, 429 while another request's lease runs.
   */
  async claim(accountId: string, key: string, hash: string, taskStream: string, holder: string, reservationId: string): Promise<KeyClaim> {
    for (;;) {
      const found = await this.lookup(accountId, key, hash);
      if (found.kind === 'replay') return found;
      const now = this.clock();
      const claimed: Claim = {
        taskStream: found.taskStream ?? taskStream,
        requestHash: hash,
        at: now.toISOString(),
        holder,
        leaseUntil: new Date(now.getTime() + this.leaseMs).toISOString(),
        reservationId,
      };
      try {
        const { nextExpectedVersion } = await recordFact(this.store, idempotencyKeyStream(accountId, key), { type: 'IdempotencyKeyClaimed', data: { key, ...claimed } }, { expected: found.expectedVersion });
        return { kind: 'claimed', revision: nextExpectedVersion, taskStream: claimed.taskStream, earlierReservations: found.earlierReservations };
      } catch (err) {
        // A concurrent request claimed it first: look again (it is in progress, or already done).
        if (!(err instanceof WrongExpectedVersionError)) throw err;
      }
    }
  }

  /** Whether the claim at `claimRevision` is still the key's latest event: no request took the key over or released it since. */
  async holds(accountId: string, key: string, claimRevision: number): Promise<boolean> {
    return (await this.store.streamHead(idempotencyKeyStream(accountId, key)))?.revision === claimRevision;
  }

  /**
   * The task stream to answer a request with `hash` with, for a holder that no longer holds the
   * key: the task if recorded; else throws 400 for another body, 429 while another lease runs,
   * and 429 for a key now free (its client retries, and claims it).
   */
  async current(accountId: string, key: string, hash: string): Promise<string> {
    const found = await this.lookup(accountId, key, hash);
    if (found.kind === 'replay') return found.taskStream;
    throw retryShortly();
  }

  /**
   * Frees a key whose request stopped before its task was recorded (a refusal such as a short
   * balance), so a retry with the same key is not told to wait. A task that exists keeps its key;
   * a claim another request has taken over since is left to it.
   */
  async release(accountId: string, key: string, claimRevision: number, taskStream: string): Promise<void> {
    if (await this.store.streamHead(taskStream)) return;
    try {
      await recordFact(this.store, idempotencyKeyStream(accountId, key), { type: 'IdempotencyKeyReleased', data: { key, at: this.clock().toISOString() } }, { expected: claimRevision });
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError)) throw err;
    }
  }

  /** What earlier requests with this key left: a free key (with the task stream already chosen), or the task to answer with. */
  private async lookup(accountId: string, key: string, hash: string): Promise<KeyLookup> {
    const events = await this.store.readStream(idempotencyKeyStream(accountId, key));
    const last = events[events.length - 1];
    const expectedVersion = last ? last.revision : 'no_stream';
    const now = this.clock().getTime();
    const claims = events.filter((e) => e.type === 'IdempotencyKeyClaimed').map((e) => e.data as Claim);
    const latest = claims[claims.length - 1];
    if (!latest || now - Date.parse(latest.at) >= WINDOW_MS) return { kind: 'free', expectedVersion, taskStream: null, earlierReservations: [] };
    // A released key stays bound to its body and its task stream within the window: a holder it was taken from may still record that task.
    if (latest.requestHash !== hash) {
      throw new DomainError('idempotency_key_reused', 'this Idempotency-Key was used with a different request body in the last 24 hours', { param: 'Idempotency-Key' });
    }
    if (await this.store.streamHead(latest.taskStream)) return { kind: 'replay', taskStream: latest.taskStream };
    if (last?.type === 'IdempotencyKeyClaimed') {
      const leaseUntil = latest.leaseUntil ? Date.parse(latest.leaseUntil) : Date.parse(latest.at) + this.leaseMs;
      if (now < leaseUntil) throw inProgress(Math.max(1, Math.ceil((leaseUntil - now) / 1000)));
    }
    const earlierReservations = claims.filter((c) => c.taskStream === latest.taskStream && c.reservationId !== undefined).map((c) => c.reservationId!);
    return { kind: 'free', expectedVersion, taskStream: latest.taskStream, earlierReservations };
  }
}

/**
 * The task a replay names is recorded but not readable yet, or a request failed before recording
 * while an earlier holder of its key may still record: the client retries shortly.
 */
export function retryShortly(): DomainError {
  return inProgress(1);
}
