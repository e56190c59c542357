import type { FailoverReason } from './failover';

/** Where a channel stands for the router. `cooling_down`: it answered 429 and its Retry-After has not passed. */
export type ChannelState = 'closed' | 'cooling_down' | 'open' | 'half_open' | 'disabled';

export const CHANNEL_STATES: readonly ChannelState[] = ['closed', 'cooling_down', 'open', 'half_open', 'disabled'];

/** A channel's health as the router sees it in this process (Router.health; GET /admin/v1/channels shows it). */
export interface ChannelHealth {
  readonly state: ChannelState;
  /** When a cooldown or an open circuit ends (ISO time); null otherwise. */
  readonly until: string | null;
  /** Why it is not closed: the failover reason that opened it, `rate_limited`, or the refusal of the credentials. */
  readonly reason: string | null;
  readonly consecutive_failures: number;
  /** Time to the response headers of the last call that answered. */
  readonly last_latency_ms?: number;
}

/**
 * A state change of a channel: what is appended to its `channel-health-<name>` stream and what the
 * other processes apply (src/upstreams/routing/health-log.ts). Only transitions are events, never
 * single failures, so a failing channel costs the log a few events per pause, not one per request:
 * a 429 on a channel already cooling down is one only when it moves the end materially later.
 */
export type ChannelHealthEvent =
  | { readonly type: 'ChannelCooldownStarted'; readonly data: { readonly channel: string; readonly until: string; readonly reason: 'rate_limited' } }
  | { readonly type: 'ChannelCircuitOpened'; readonly data: { readonly channel: string; readonly until: string; readonly reason: FailoverReason; readonly consecutive_failures: number; readonly pause_ms: number } }
  | { readonly type: 'ChannelCircuitHalfOpened'; readonly data: { readonly channel: string } }
  | { readonly type: 'ChannelCircuitClosed'; readonly data: { readonly channel: string } }
  /**
   * `credentials_since`: when the refused credentials were set (the channel's rotation or creation in
   * the log), so that a process holding newer ones ignores it; absent for a channel the log does not hold.
   */
  | { readonly type: 'ChannelCredentialsRefused'; readonly data: { readonly channel: string; readonly reason: string; readonly credentials_since?: string } };

export const CHANNEL_HEALTH_EVENT_TYPES: ReadonlySet<string> = new Set([
  'ChannelCooldownStarted',
  'ChannelCircuitOpened',
  'ChannelCircuitHalfOpened',
  'ChannelCircuitClosed',
  'ChannelCredentialsRefused',
]);

export interface CircuitOptions {
  /** Consecutive failover-worthy failures (429s aside: they carry their own pause) that open the circuit. */
  readonly failureThreshold: number;
  /** The first pause of an open circuit; each failed probe doubles it, up to `maxOpenMs`. */
  readonly openMs: number;
  readonly maxOpenMs: number;
  /** The cooldown of a 429 that names no Retry-After. */
  readonly cooldownMs: number;
  /** The longest cooldown a Retry-After may ask for. */
  readonly maxCooldownMs: number;
}

/**
 * How much later a new 429 must move a running cooldown's end before the move is appended again:
 * a tenth of what was left of it, and at least a second. Other processes then learn an end at most
 * that much early, and ask the channel once more to learn the rest from its own 429.
 */
function materialExtensionMs(remainingMs: number): number {
  return Math.max(1_000, remainingMs / 10);
}

/** One channel's mutable record; `probing` is this process's one half-open probe in flight. */
interface HealthRecord {
  failures: number;
  cooldownUntil: number;
  /** The latest cooldown end the log holds (this process's or another's): quiet extensions go past it. */
  loggedCooldownUntil: number;
  circuit: 'closed' | 'open' | 'half_open';
  openUntil: number;
  pauseMs: number;
  probing: boolean;
  openReason: FailoverReason | null;
  disabled: string | null;
  latencyMs: number | null;
}

/**
 * The health of every channel in this process: cooldowns, circuits and disabled channels, and the
 * transitions between them. Pure bookkeeping over an injected clock: what it decides is handed to
 * `onTransition` (the router appends it to the log and counts it); what other processes decided
 * comes back through `apply`.
 */
export class ChannelHealthBook {
  private readonly records = new Map<string, HealthRecord>();

  constructor(
    private readonly options: CircuitOptions,
    private readonly now: () => number,
    private readonly onTransition: (event: ChannelHealthEvent) => void,
  ) {}

  private record(name: string): HealthRecord {
    let r = this.records.get(name);
    if (!r) {
      r = { failures: 0, cooldownUntil: 0, loggedCooldownUntil: 0, circuit: 'closed', openUntil: 0, pauseMs: this.options.openMs, probing: false, openReason: null, disabled: null, latencyMs: null };
      this.records.set(name, r);
    }
    return r;
  }

  /**
   * Whether a request may go to the channel now. An open circuit whose pause is over lets exactly
   * one request through as its probe (half-open): the caller that gets `probe` must report its
   * outcome (succeeded, failed or released).
   */
  admit(name: string): 'yes' | 'probe' | 'no' {
    const r = this.records.get(name);
    // The common case, a channel that never failed: no record, nothing to allocate.
    if (!r) return 'yes';
    if (r.disabled !== null) return 'no';
    const now = this.now();
    if (r.cooldownUntil > now) return 'no';
    if (r.circuit === 'closed') return 'yes';
    if (r.probing || (r.circuit === 'open' && r.openUntil > now)) return 'no';
    r.probing = true;
    if (r.circuit === 'open') {
      r.circuit = 'half_open';
      this.onTransition({ type: 'ChannelCircuitHalfOpened', data: { channel: name } });
    }
    return 'probe';
  }

  /** Milliseconds until the channel may be asked again; null when only an operator can mend it (disabled). */
  waitMs(name: string): number | null {
    const r = this.records.get(name);
    if (!r) return 0;
    if (r.disabled !== null) return null;
    const now = this.now();
    const circuitWait = r.circuit === 'closed' ? 0 : Math.max(0, r.openUntil - now);
    return Math.max(0, r.cooldownUntil - now, circuitWait);
  }

  /** The channel answered (any answer of the provider's own, a refusal of the request included). */
  succeeded(name: string, latencyMs: number | null = null): void {
    const r = this.records.get(name);
    if (!r) {
      if (latencyMs !== null) this.record(name).latencyMs = latencyMs;
      return;
    }
    if (latencyMs !== null) r.latencyMs = latencyMs;
    r.failures = 0;
    r.probing = false;
    if (r.circuit !== 'closed') {
      r.circuit = 'closed';
      r.pauseMs = this.options.openMs;
      r.openReason = null;
      this.onTransition({ type: 'ChannelCircuitClosed', data: { channel: name } });
    }
  }

  /** A probe or attempt ended with no verdict on the channel (the client left): lets another probe through. */
  released(name: string): void {
    const r = this.records.get(name);
    if (r) r.probing = false;
  }

  /** A failover-worthy failure; `retryAfterMs` for a 429 (null: the default cooldown). */
  failed(name: string, reason: FailoverReason, retryAfterMs: number | null = null, detail?: string, credentialsSince?: string): void {
    const r = this.record(name);
    const now = this.now();
    if (reason === 'credentials_refused') {
      r.probing = false;
      if (r.disabled === null) {
        r.disabled = detail ?? 'the provider refused the gateway\'s credentials';
        const since = credentialsSince === undefined ? {} : { credentials_since: credentialsSince };
        this.onTransition({ type: 'ChannelCredentialsRefused', data: { channel: name, reason: r.disabled, ...since } });
      }
      return;
    }
    if (reason === 'rate_limited') {
      r.probing = false;
      const until = now + Math.min(retryAfterMs ?? this.options.cooldownMs, this.options.maxCooldownMs);
      // A cooldown only ever ends: a later, shorter Retry-After does not shorten it, and none is
      // longer than maxCooldownMs, so a channel cannot stay cooling down forever.
      if (until <= r.cooldownUntil) return;
      const wasCooling = r.cooldownUntil > now;
      r.cooldownUntil = until;
      // The calls a cooling channel still gets (a sole or pinned channel, calls already in flight)
      // each answer 429 with an end a little later: only a start, or an end moved materially past
      // the one the log holds, is a transition worth the log; the others extend it here alone.
      if (wasCooling && until - r.loggedCooldownUntil < materialExtensionMs(r.loggedCooldownUntil - now)) return;
      r.loggedCooldownUntil = until;
      this.onTransition({ type: 'ChannelCooldownStarted', data: { channel: name, until: new Date(until).toISOString(), reason: 'rate_limited' } });
      return;
    }
    r.failures++;
    const probeFailed = r.circuit === 'half_open' && r.probing;
    r.probing = false;
    if (probeFailed) {
      r.pauseMs = Math.min(r.pauseMs * 2, this.options.maxOpenMs);
      this.open(name, r, reason, now);
    } else if (r.circuit === 'closed' && r.failures >= this.options.failureThreshold) {
      this.open(name, r, reason, now);
    }
  }

  private open(name: string, r: HealthRecord, reason: FailoverReason, now: number): void {
    r.circuit = 'open';
    r.openUntil = now + r.pauseMs;
    r.openReason = reason;
    this.onTransition({
      type: 'ChannelCircuitOpened',
      data: { channel: name, until: new Date(r.openUntil).toISOString(), reason, consecutive_failures: r.failures, pause_ms: r.pauseMs },
    });
  }

  /**
   * A transition another process recorded. Applied without a transition of its own (it is in the
   * log already): an open circuit or a cooldown keeps the later end, a close closes. A half-open
   * is not taken over: each process lets its own one probe through.
   */
  apply(event: ChannelHealthEvent): void {
    const r = this.record(event.data.channel);
    switch (event.type) {
      case 'ChannelCooldownStarted':
        r.cooldownUntil = Math.max(r.cooldownUntil, Date.parse(event.data.until));
        r.loggedCooldownUntil = Math.max(r.loggedCooldownUntil, Date.parse(event.data.until));
        return;
      case 'ChannelCircuitOpened': {
        const until = Date.parse(event.data.until);
        if (r.circuit === 'open' && r.openUntil >= until) return;
        r.circuit = r.probing ? 'half_open' : 'open';
        r.openUntil = Math.max(r.openUntil, until);
        r.openReason = event.data.reason;
        r.pauseMs = Math.max(r.pauseMs, event.data.pause_ms);
        return;
      }
      case 'ChannelCircuitClosed':
        if (r.probing) return;
        r.circuit = 'closed';
        r.failures = 0;
        r.pauseMs = this.options.openMs;
        r.openReason = null;
        return;
      case 'ChannelCircuitHalfOpened':
        return;
      case 'ChannelCredentialsRefused':
        r.disabled ??= event.data.reason;
        return;
    }
  }

  /** Clears everything known of the channel: its configuration changed (new credentials), or an operator enabled it. */
  mend(name: string): void {
    this.records.delete(name);
  }

  health(name: string, disabledByOperator: string | null): ChannelHealth {
    const r = this.records.get(name);
    const latency = r?.latencyMs;
    const extra = latency === null || latency === undefined ? {} : { last_latency_ms: latency };
    const failures = r?.failures ?? 0;
    if (disabledByOperator !== null || r?.disabled) {
      return { state: 'disabled', until: null, reason: disabledByOperator ?? r!.disabled, consecutive_failures: failures, ...extra };
    }
    if (!r) return { state: 'closed', until: null, reason: null, consecutive_failures: 0 };
    const now = this.now();
    if (r.circuit === 'half_open') return { state: 'half_open', until: null, reason: r.openReason, consecutive_failures: failures, ...extra };
    if (r.circuit === 'open') {
      // An open circuit whose pause is over is half-open in effect: the next request probes it.
      if (r.openUntil <= now) return { state: 'half_open', until: null, reason: r.openReason, consecutive_failures: failures, ...extra };
      return { state: 'open', until: new Date(r.openUntil).toISOString(), reason: r.openReason, consecutive_failures: failures, ...extra };
    }
    if (r.cooldownUntil > now) return { state: 'cooling_down', until: new Date(r.cooldownUntil).toISOString(), reason: 'rate_limited', consecutive_failures: failures, ...extra };
    return { state: 'closed', until: null, reason: null, consecutive_failures: failures, ...extra };
  }
}
