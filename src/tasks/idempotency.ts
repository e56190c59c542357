import { createHash } from 'node:crypto';
import type { EventStore } from '../eventstore/port';
import { WrongExpectedVersionError } from '../eventstore/port';
import type { GatewayContext } from '../http/context';
import { ApiError } from '../http/errors';

/**
 * `Idempotency-Key` on task creation: the same key with the same body within 24 hours returns the
 * first task and freezes nothing new; with another body, 409. A key is claimed by appending to its
 * own stream with an expected version, so two concurrent requests cannot both win.
 */
const WINDOW_MS = 24 * 3_600_000;

interface Claim {
  readonly taskStream: string;
  readonly requestHash: string;
  readonly at: string;
}

export function requestHash(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

/** `Idempotency-Key` of a create call, with the hash of its raw body; null without the header. */
export function idempotencyOf(ctx: GatewayContext): { key: string; hash: string } | null {
  const key = ctx.get('idempotency-key');
  if (!key) return null;
  if (key.length > 255) throw new ApiError(400, 'invalid_idempotency_key', 'Idempotency-Key is at most 255 characters', { param: 'Idempotency-Key' });
  return { key, hash: requestHash(ctx.state.rawBody) };
}

function keyStream(accountId: string, key: string): string {
  return `idem-${accountId}-${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}

export type KeyLookup = { kind: 'free'; expectedVersion: number | 'no_stream' } | { kind: 'replay'; taskStream: string };

export class IdempotencyKeys {
  constructor(
    private readonly store: EventStore,
    private readonly clock: () => Date,
    /** A claim whose task never appeared (a crash in between) may be taken over after this. */
    private readonly abandonedAfterMs: number,
  ) {}

  /** What an earlier request with this key left: nothing usable (free), or the task to answer with. */
  async lookup(accountId: string, key: string, hash: string): Promise<KeyLookup> {
    const events = await this.store.readStream(keyStream(accountId, key));
    const last = events[events.length - 1];
    const expectedVersion = last ? last.revision : 'no_stream';
    const claim = last?.data as Claim | undefined;
    const now = this.clock().getTime();
    if (!claim || now - Date.parse(claim.at) >= WINDOW_MS) return { kind: 'free', expectedVersion };
    if (claim.requestHash !== hash) {
      throw new ApiError(409, 'idempotency_key_reused', 'this Idempotency-Key was used with a different request body in the last 24 hours');
    }
    if (await this.store.streamHead(claim.taskStream)) return { kind: 'replay', taskStream: claim.taskStream };
    if (now - Date.parse(claim.at) < this.abandonedAfterMs) {
      throw new ApiError(409, 'idempotent_request_in_progress', 'a request with this Idempotency-Key is still being processed');
    }
    return { kind: 'free', expectedVersion };
  }

  /** Claims the key for a task; false when a concurrent request claimed it first. */
  async claim(accountId: string, key: string, hash: string, taskStream: string, expectedVersion: number | 'no_stream'): Promise<boolean> {
    try {
      await this.store.append(
        keyStream(accountId, key),
        [{ type: 'IdempotencyKeyClaimed', data: { key, taskStream, requestHash: hash, at: this.clock().toISOString() } }],
        { expectedVersion },
      );
      return true;
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) return false;
      throw err;
    }
  }
}
