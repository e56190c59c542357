import { displayPrefix, looksLikeApiKey } from '../accounts/api-keys';
import { ApiError } from './errors';

/**
 * Slows clients whose credentials fail (wrong or missing API keys, admin tokens, dashboard
 * sessions and sign-ins), without ever refusing a valid one: a credential is checked first, at
 * the same cost whatever the lockout holds, and only a refused one is counted, by the client
 * address and by the API key prefix it tried. `maxFailures` of either within `windowMs` lock it
 * for `lockoutMs`: its further failures are answered 429 with Retry-After (or the endpoint's 401)
 * instead of 401, so a client sharing the address (or another holder of the prefix) that
 * presents a valid key is served all along.
 *
 * Checking first gives a locked address nothing to learn that it could not learn before: an API
 * key carries 256 random bits, so no number of tries finds one. It also means each failure of a
 * locked address still costs its check (one indexed read of a key the cache does not hold), as
 * every address's failures before the lock do: sparing it would refuse, with the failures, the
 * valid keys not yet cached of the clients behind that address. The admin token is the one
 * secret an operator may have chosen guessable, so an address locked by failed admin tokens
 * (its own count) is refused those unchecked, and cannot test them at any speed.
 *
 * In this process's memory, at most `maxAddresses` entries of each kind (addresses, addresses'
 * admin tokens, key prefixes; the least recently failed goes first), so a flood of addresses or
 * prefixes cannot grow it without bound, and a flood of one kind cannot evict another's lock.
 */
export interface LockoutSettings {
  readonly maxFailures: number;
  readonly windowMs: number;
  readonly lockoutMs: number;
  readonly maxAddresses: number;
}

/** What a request tries, as the lockout counts it. */
export interface Attempt {
  /** Whether it tries the admin token, a secret that may be guessable. */
  readonly guessable: boolean;
  /** The secret it presented, read only when it fails: one shaped like an API key counts by its display prefix (`tr-` and six characters). */
  presented(): string | null;
}

/** The answer to a locked-out client's failure where the endpoint lists 429. */
export function tooManyFailures(retryAfterSeconds: number): ApiError {
  return new ApiError(429, 'too_many_failed_credentials', `too many failed credentials; retry after ${retryAfterSeconds} s`, {
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
}

interface Entry {
  windowStart: number;
  failures: number;
  lockedUntil: number;
}

/**
 * Failure counts of one kind of source, at most `capacity` of them (the least recently failed is
 * forgotten first). Each kind has its own, so failures of one kind cannot push out another's
 * lock: a flood of key prefixes, which one address can make without end, never evicts the lock
 * on that address's admin tokens.
 */
class FailureCounts {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly capacity: number) {}

  get(source: string): Entry | undefined {
    return this.entries.get(source);
  }

  /** The entry of `source`, now the most recently failed. */
  touch(source: string, fresh: () => Entry): Entry {
    const entry = this.entries.get(source) ?? fresh();
    // Re-inserted so the map's order is least recently failed first.
    this.entries.delete(source);
    this.entries.set(source, entry);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return entry;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** A kind of source counted, and the one a request is counted as. */
interface Source {
  readonly counts: FailureCounts;
  readonly id: string;
}

export class CredentialLockout {
  private readonly addresses: FailureCounts;
  /** Failed admin tokens by address, counted apart so that failed keys never lock the operator out. */
  private readonly adminTokens: FailureCounts;
  private readonly keyPrefixes: FailureCounts;

  constructor(
    private readonly settings: LockoutSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.addresses = new FailureCounts(settings.maxAddresses);
    this.adminTokens = new FailureCounts(settings.maxAddresses);
    this.keyPrefixes = new FailureCounts(settings.maxAddresses);
  }

  /**
   * Runs `check` (which throws a 401 ApiError for a refused credential) for a request from
   * `address`. A refusal is counted, and becomes `lockedOut(seconds)` while the address or the key
   * prefix is locked; a success is never counted and never waits for the lockout.
   */
  async admit<T>(address: string, attempt: Attempt, lockedOut: (retryAfterSeconds: number) => ApiError, check: () => Promise<T>): Promise<T> {
    const admin: Source = { counts: this.adminTokens, id: address };
    if (attempt.guessable) {
      const wait = this.retryAfterSeconds([admin]);
      if (wait !== null) throw lockedOut(wait);
    }
    try {
      return await check();
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) throw err;
      const sources: Source[] = [{ counts: this.addresses, id: address }];
      const secret = attempt.presented();
      if (secret !== null && looksLikeApiKey(secret)) sources.push({ counts: this.keyPrefixes, id: displayPrefix(secret) });
      if (attempt.guessable) sources.push(admin);
      // Locked by earlier failures: the one that reaches the limit is still answered as it was.
      const wait = this.retryAfterSeconds(sources);
      for (const source of sources) this.recordFailure(source);
      throw wait === null ? err : lockedOut(wait);
    }
  }

  /** Seconds until the longest lock among `sources` ends, or null when none is locked. */
  private retryAfterSeconds(sources: readonly Source[]): number | null {
    const now = this.now();
    let until = 0;
    for (const { counts, id } of sources) until = Math.max(until, counts.get(id)?.lockedUntil ?? 0);
    return until <= now ? null : Math.max(1, Math.ceil((until - now) / 1000));
  }

  private recordFailure({ counts, id }: Source): void {
    if (this.settings.maxFailures <= 0) return;
    const now = this.now();
    const entry = counts.touch(id, () => ({ windowStart: now, failures: 0, lockedUntil: 0 }));
    if (now - entry.windowStart >= this.settings.windowMs) {
      entry.windowStart = now;
      entry.failures = 0;
    }
    entry.failures += 1;
    if (entry.failures >= this.settings.maxFailures) {
      entry.lockedUntil = now + this.settings.lockoutMs;
      entry.failures = 0;
      entry.windowStart = now;
    }
  }

  /** Entries tracked (for tests of the memory bound). */
  get size(): number {
    return this.addresses.size + this.adminTokens.size + this.keyPrefixes.size;
  }
}
