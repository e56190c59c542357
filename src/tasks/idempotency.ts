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
 * moves, so of two concurrent requests exactly one reserves; the other answers 429 with
 * Retry-After until the winner's task exists, and then replays it.
 */
const WINDOW_MS = 24 * 3_600_000;

interface Claim {
  readonly taskStream: string;
  readonly requestHash: string;
  readonly at: string;
}

/** The client retries shortly (src/http/errors.ts answers 429 with Retry-After). */
const inProgress = () => new DomainError('idempotent_request_in_progress', 'a request with this Idempotency-Key is still being processed; retry shortly');

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

function keyStream(accountId: string, key: string): string {
  return `idem-${accountId}-${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}

type KeyLookup = { kind: 'free'; expectedVersion: number | 'no_stream' } | { kind: 'replay'; taskStream: string };

/** The outcome of claiming a key: the request goes on (and must `release` if it stops before its task exists), or replays. */
export type KeyClaim = { kind: 'claimed'; revision: number } | { kind: 'replay'; taskStream: string };

export class IdempotencyKeys {
  constructor(
    private readonly store: EventStore,
    private readonly clock: () => Date,
    /** A claim whose task never appeared (a crash in between) may be taken over after this. */
    private readonly abandonedAfterMs: number,
  ) {}

  /**
   * Claims the key for the task `taskStream` is about to become, or answers the task an earlier
   * request made. Throws 400 for another body, 429 while another request holds the key.
   */
  async claim(accountId: string, key: string, hash: string, taskStream: string): Promise<KeyClaim> {
    for (;;) {
      const found = await this.lookup(accountId, key, hash);
      if (found.kind === 'replay') return found;
      try {
        const { nextExpectedVersion } = await recordFact(
          this.store,
          keyStream(accountId, key),
          { type: 'IdempotencyKeyClaimed', data: { key, taskStream, requestHash: hash, at: this.clock().toISOString() } },
          { expected: found.expectedVersion },
        );
        return { kind: 'claimed', revision: nextExpectedVersion };
      } catch (err) {
        // A concurrent request claimed it first: look again (it is in progress, or already done).
        if (!(err instanceof WrongExpectedVersionError)) throw err;
      }
    }
  }

  /**
   * Frees a key whose request stopped before its task was recorded (a refusal such as a short
   * balance), so a retry with the same key is not told to wait. A task that exists keeps its key.
   */
  async release(accountId: string, key: string, claimRevision: number, taskStream: string): Promise<void> {
    if (await this.store.streamHead(taskStream)) return;
    try {
      await recordFact(this.store, keyStream(accountId, key), { type: 'IdempotencyKeyReleased', data: { key, at: this.clock().toISOString() } }, { expected: claimRevision });
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError)) throw err;
    }
  }

  /** What an earlier request with this key left: nothing usable (free), or the task to answer with. */
  private async lookup(accountId: string, key: string, hash: string): Promise<KeyLookup> {
    const events = await this.store.readStream(keyStream(accountId, key));
    const last = events[events.length - 1];
    const expectedVersion = last ? last.revision : 'no_stream';
    const claim = last?.type === 'IdempotencyKeyClaimed' ? (last.data as Claim) : undefined;
    const now = this.clock().getTime();
    if (!claim || now - Date.parse(claim.at) >= WINDOW_MS) return { kind: 'free', expectedVersion };
    if (claim.requestHash !== hash) {
      throw new DomainError('idempotency_key_reused', 'this Idempotency-Key was used with a different request body in the last 24 hours', { param: 'Idempotency-Key' });
    }
    if (await this.store.streamHead(claim.taskStream)) return { kind: 'replay', taskStream: claim.taskStream };
    if (now - Date.parse(claim.at) < this.abandonedAfterMs) throw inProgress();
    return { kind: 'free', expectedVersion };
  }
}

/** The task a replay names is recorded but not readable yet: the client retries shortly. */
export function replayNotReadable(): DomainError {
  return inProgress();
}
