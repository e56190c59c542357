import { followLog, type LogFollower } from '../eventstore/follow-log';
import type { EventStore, GlobalPosition, RecordedEvent } from '../eventstore/port';
import type { Logger } from '../log';

/** Every event that changes what a key may do (revocation, and any later key change) starts so. */
export function isKeyEvent(type: string): boolean {
  return type.startsWith('ApiKey');
}

/** The key a key event concerns; null when the event names none (then every key is suspect). */
function keyIdOf(event: { data: unknown }): string | null {
  const data = event.data as { keyId?: unknown } | null;
  return data && typeof data.keyId === 'string' ? data.keyId : null;
}

/** The key and its new hash, of a regeneration event; null when the event names no key. */
function regeneratedHashOf(event: { data: unknown }): { keyId: string; hash: string } | null {
  const data = event.data as { keyId?: unknown; keyHash?: unknown } | null;
  return data && typeof data.keyId === 'string' && typeof data.keyHash === 'string' ? { keyId: data.keyId, hash: data.keyHash } : null;
}

export interface KeyCacheStats {
  readonly size: number;
  readonly capacity: number;
  readonly hits: number;
  readonly misses: number;
  readonly invalidations: number;
}

/**
 * Authenticated keys by key hash, so that a request costs no database query for its key.
 *
 * The read model (rm.api_keys) is the truth, and it lags the log. A key event therefore has two
 * effects here: its key is dropped and marked as changing at once, and until the api_keys read
 * model has folded the event's position nothing new is cached and a changing key that was
 * revoked is refused even when the lagging read model still shows it (so a revocation takes
 * effect at once, not when the projection catches up), and a key whose settings changed is
 * read again once the read model has the change (so a narrowed key never passes on its old
 * settings meanwhile), and a key whose secret was regenerated is refused under any hash but the new
 * one (its old secret stops at once, as a revocation of that secret). When the read model has it, the key is
 * dropped once more (a lookup that raced the event must not stay cached) and the marks go.
 *
 * Only found keys are cached: a key issued in another process is found by the next lookup.
 * Bounded (least recently used goes first) and counted (stats()).
 */
export class ApiKeyCache<Key extends { readonly keyId: string }> {
  private readonly entries = new Map<string, Key>();
  /** Bumped by every invalidation: a lookup that started before one must not store its answer. */
  private generation = 0;
  /** Key events whose position the read model has not folded yet. */
  private unsettled = 0;
  /** Keys revoked by an unsettled event, with how many such events are pending for each. */
  private readonly revoking = new Map<string, number>();
  /**
   * Keys whose secret an unsettled event regenerated: the latest hash, the only one admitted until
   * the read model has it, and how many such events are pending for the key.
   */
  private readonly regenerating = new Map<string, { hash: string; pending: number }>();
  /**
   * Keys changed (narrowed or widened) by an unsettled event, with the moment the read model has
   * it: a lookup of such a key waits for it, so a narrowed key never passes on its old settings.
   */
  private readonly changing = new Map<string, Promise<void>>();
  private hits = 0;
  private misses = 0;
  private invalidations = 0;
  /** Caching is off until the log is followed (and whenever following it failed). */
  private following = false;

  private closed = false;

  /**
   * `readModelReached` answers whether the api_keys read model has folded a position, waiting up
   * to `timeoutMs` for it (ConsumerProgress.waitFor).
   */
  constructor(
    private readonly readModelReached: (position: GlobalPosition, timeoutMs: number) => Promise<boolean>,
    private readonly capacity = 10_000,
  ) {}

  /** Resolves once the read model has folded `position`, however long that takes (or on close). */
  private async readModelAt(position: GlobalPosition): Promise<void> {
    while (!this.closed && !(await this.readModelReached(position, 1000)));
  }

  stats(): KeyCacheStats {
    return { size: this.entries.size, capacity: this.capacity, hits: this.hits, misses: this.misses, invalidations: this.invalidations };
  }

  /** The key for `keyHash`, from the cache or from `load` (the read model). */
  async lookup(keyHash: string, load: () => Promise<Key | null>): Promise<Key | null> {
    const hit = this.entries.get(keyHash);
    if (hit) {
      this.hits++;
      this.entries.delete(keyHash);
      this.entries.set(keyHash, hit);
      return hit;
    }
    this.misses++;
    const generation = this.generation;
    const found = await load();
    if (!found || this.revoking.has(found.keyId)) return null;
    const regenerated = this.regenerating.get(found.keyId);
    if (regenerated && regenerated.hash !== keyHash) return null;
    const change = this.changing.get(found.keyId);
    if (change) {
      await change;
      return this.lookup(keyHash, load);
    }
    if (this.following && this.unsettled === 0 && generation === this.generation) {
      this.entries.set(keyHash, found);
      if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    }
    return found;
  }

  /**
   * Key events were appended up to `position` (here or by another process): takes effect at
   * once; the returned promise settles when the read model has them too.
   */
  keysChanged(events: readonly { type: string; data: unknown }[], position: GlobalPosition): Promise<void> {
    const keyEvents = events.filter((e) => isKeyEvent(e.type));
    if (keyEvents.length === 0) return Promise.resolve();
    const keyIds = keyEvents.map(keyIdOf);
    const revoked = keyEvents.filter((e) => e.type === 'ApiKeyRevoked').map(keyIdOf).filter((id): id is string => id !== null);
    const changed = keyEvents.filter((e) => e.type === 'ApiKeyChanged').map(keyIdOf).filter((id): id is string => id !== null);
    const regenerated = keyEvents.filter((e) => e.type === 'ApiKeySecretRegenerated').map(regeneratedHashOf).filter((r) => r !== null);
    this.unsettled++;
    for (const id of revoked) this.revoking.set(id, (this.revoking.get(id) ?? 0) + 1);
    // In log order, so the last one of a key names its newest hash.
    for (const { keyId, hash } of regenerated) this.regenerating.set(keyId, { hash, pending: (this.regenerating.get(keyId)?.pending ?? 0) + 1 });
    this.invalidate(keyIds);
    const settle = (): void => {
      this.invalidate(keyIds);
      for (const id of revoked) {
        const n = this.revoking.get(id)! - 1;
        if (n === 0) this.revoking.delete(id);
        else this.revoking.set(id, n);
      }
      for (const { keyId } of regenerated) {
        const entry = this.regenerating.get(keyId)!;
        if (entry.pending === 1) this.regenerating.delete(keyId);
        else this.regenerating.set(keyId, { hash: entry.hash, pending: entry.pending - 1 });
      }
      this.unsettled--;
    };
    const settled = this.readModelAt(position).then(settle, (err: unknown) => {
      settle();
      throw err;
    });
    const reached = settled.catch(() => undefined);
    for (const id of changed) {
      this.changing.set(id, reached);
      void reached.then(() => {
        if (this.changing.get(id) === reached) this.changing.delete(id);
      });
    }
    return settled;
  }

  private invalidate(keyIds: readonly (string | null)[]): void {
    this.generation++;
    this.invalidations++;
    if (keyIds.includes(null)) {
      this.entries.clear();
      return;
    }
    const ids = new Set(keyIds);
    for (const [hash, key] of this.entries) if (ids.has(key.keyId)) this.entries.delete(hash);
  }

  /** Drops everything and stops caching until follow() runs again. */
  private suspend(): void {
    this.following = false;
    this.generation++;
    this.entries.clear();
  }

  /**
   * Follows the log from its head (src/eventstore/follow-log.ts) and applies every key event to
   * the cache. Whatever the log held before is covered by waiting, before caching anything, until
   * the read model has folded the start position. If following fails, caching stops until it
   * resumes from the last position seen.
   */
  follow(store: EventStore, logger: Logger): LogFollower {
    const settling = new Set<Promise<void>>();
    // While following fails, the key changes it leaves unsettled are logged at debug level: the
    // outage itself is said once.
    const track = (p: Promise<void>): void => {
      const tracked = p
        .catch((err: unknown) => logger[follower.failing ? 'debug' : 'warn']({ err }, 'key cache: a key change did not settle'))
        .finally(() => settling.delete(tracked));
      settling.add(tracked);
    };
    const follower: LogFollower = followLog(store, {
      name: 'key cache',
      meanwhile: 'caching is off (keys are looked up on every request)',
      logger,
      onStart: (at) => {
        this.suspend();
        // Everything up to the start point: caching begins once the read model has it.
        this.unsettled++;
        this.following = true;
        track(
          (at ? this.readModelAt(at) : Promise.resolve()).finally(() => {
            this.generation++;
            this.unsettled--;
          }),
        );
      },
      onBatch: async (events: RecordedEvent[]) => {
        const keyEvents = events.filter((e) => isKeyEvent(e.type));
        if (keyEvents.length > 0) track(this.keysChanged(keyEvents, keyEvents[keyEvents.length - 1]!.position));
      },
      onFailure: () => this.suspend(),
      onClose: async () => {
        this.closed = true;
        this.suspend();
        await Promise.all(settling);
      },
    });
    return follower;
  }
}
