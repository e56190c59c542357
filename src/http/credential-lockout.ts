/**
 * Locks out a client address after too many failed credentials (wrong or missing API keys and
 * admin tokens): `maxFailures` within `windowMs` locks it for `lockoutMs`. A locked address is
 * refused without its credential being checked, so guessing keys gets nowhere; other addresses
 * are never affected. In this process's memory, at most `maxAddresses` addresses (the oldest
 * entry goes first), so a flood of addresses cannot grow it without bound.
 */
export interface LockoutSettings {
  readonly maxFailures: number;
  readonly windowMs: number;
  readonly lockoutMs: number;
  readonly maxAddresses: number;
}

interface Entry {
  windowStart: number;
  failures: number;
  lockedUntil: number;
}

export class CredentialLockout {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly settings: LockoutSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until the address may try again, or null when it is not locked out. */
  retryAfterSeconds(address: string): number | null {
    const entry = this.entries.get(address);
    const now = this.now();
    if (!entry || entry.lockedUntil <= now) return null;
    return Math.max(1, Math.ceil((entry.lockedUntil - now) / 1000));
  }

  recordFailure(address: string): void {
    if (this.settings.maxFailures <= 0) return;
    const now = this.now();
    let entry = this.entries.get(address);
    if (!entry || now - entry.windowStart >= this.settings.windowMs) {
      entry = { windowStart: now, failures: 0, lockedUntil: entry?.lockedUntil ?? 0 };
    }
    entry.failures += 1;
    if (entry.failures >= this.settings.maxFailures) {
      entry.lockedUntil = now + this.settings.lockoutMs;
      entry.failures = 0;
      entry.windowStart = now;
    }
    // Re-inserted so the map's order is least recently failed first.
    this.entries.delete(address);
    this.entries.set(address, entry);
    if (this.entries.size > this.settings.maxAddresses) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Addresses tracked (for tests of the memory bound). */
  get size(): number {
    return this.entries.size;
  }
}
