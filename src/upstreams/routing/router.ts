import type { ModelEntry } from '../../billing/catalog';
import type { Channel } from '../channel';
import { credentialRefusal, UpstreamError } from '../errors';
import type { Upstreams } from '../registry';
import { classifyFailure, retryAfterMs, type FailoverReason } from './failover';
import { ChannelHealthBook, type ChannelHealth, type ChannelHealthEvent, type CircuitOptions } from './health';
import { attemptOrder, type Random } from './order';

/**
 * Every channel of the model is cooling down or has an open circuit: the request was sent nowhere.
 * An UpstreamError of status 429 so that every endpoint answers it as a provider's rate limit
 * (upstreamToApiError: 429 with this Retry-After); web Q&A, whose contract has no 429, answers it
 * as 502 `gateway_busy`.
 */
export class ChannelsBusyError extends UpstreamError {
  constructor(
    model: string,
    /** Whole seconds until the first channel may be asked again, rounded up. */
    readonly retryAfterSeconds: number,
  ) {
    super(429, `every channel of model ${model} is cooling down or paused after failures; retry in ${retryAfterSeconds} s`, 'rate_limit_exceeded', 'http', String(retryAfterSeconds));
    this.name = 'ChannelsBusyError';
  }
}

/** Every channel of the model is disabled (an operator's, or its credentials were refused): only an operator mends that. */
function allDisabled(model: string): UpstreamError {
  return new UpstreamError(502, `every channel of model ${model} is disabled; the operator has been told why (channel health)`, 'upstream_unavailable');
}

/**
 * The channel holding a call's provider state (`only`) is no longer configured (deleted through the
 * admin API, or left out of CHANNELS): no other channel knows that state, so nothing is sent. A 502
 * `upstream_unavailable` where the caller has no answer of its own (Responses and web Q&A refuse
 * such a continuation with their 400 before reserving; this covers a deletion in between).
 */
export class PinnedChannelGoneError extends UpstreamError {
  constructor(readonly channel: string) {
    super(502, 'the provider account holding what this request continues is no longer configured', 'upstream_unavailable', 'protocol');
    this.name = 'PinnedChannelGoneError';
  }
}

/** What the router tells the metrics (src/metrics): each failover, and each transition this process decided. */
export interface RoutingObserver {
  failover(channel: string, reason: FailoverReason): void;
  transition(event: ChannelHealthEvent): void;
}

export interface AttemptOptions {
  /**
   * The call makes provider state the gateway must not make twice (an async task's submit): a
   * timeout or a broken connection after the request was written is not failed over (outcome
   * unknown), only a refused connection and a provider's error answer are.
   */
  readonly outcomeMatters?: boolean;
  /** The request's own abort (the client left): an abort is never a channel's failure. */
  readonly signal?: AbortSignal;
  /**
   * The one channel that holds the provider state the call is tied to (a `previous_response_id`,
   * a conversation, a task): asked whatever its health, never failed over; its failure still
   * counts towards its health.
   */
  readonly only?: string;
}

/** The options of a call that only the request's abort ties (no `only`, outcome not at stake). */
export function routeOptions(signal: AbortSignal | undefined): AttemptOptions {
  return signal === undefined ? {} : { signal };
}

/** A call's value and the channel that served it (the settlement names it; a task records it). */
export interface Served<T> {
  readonly value: T;
  readonly channel: string;
}

export interface RouterOptions extends CircuitOptions {
  readonly clock: () => Date;
  readonly random?: Random;
}

/**
 * Picks a model's channel for each attempt and fails over by the rule of classifyFailure: highest
 * priority first, weighted within a priority, skipping channels disabled, cooling down or with an
 * open circuit (docs/operations.md, Routing). It owns no money: a caller holds one reservation for
 * the whole request, and settles it with the channel that served.
 */
export class Router {
  private readonly book: ChannelHealthBook;
  private readonly random: Random;
  private readonly now: () => number;

  constructor(
    private readonly upstreams: Upstreams,
    options: RouterOptions,
    private readonly observer: RoutingObserver,
    /** Where a transition of this process goes: the log (health-log.ts). */
    private readonly record: (event: ChannelHealthEvent) => void = () => undefined,
  ) {
    this.random = options.random ?? Math.random;
    this.now = () => options.clock().getTime();
    this.book = new ChannelHealthBook(options, this.now, (event) => {
      this.observer.transition(event);
      this.record(event);
    });
    upstreams.onMended((name) => this.book.mend(name));
  }

  /**
   * Runs `call` on the model's channels in attempt order until one answers or a failure is not
   * one to fail over; the caller's `call` must raise before any byte reaches the client (what it
   * does after that is past failover). Throws the last channel's error when every channel tried
   * failed, ChannelsBusyError when none could be tried.
   */
  async attempt<T>(model: ModelEntry, call: (channel: Channel) => Promise<T>, options: AttemptOptions = {}): Promise<Served<T>> {
    if (options.only !== undefined && !this.upstreams.hasChannel(options.only)) throw new PinnedChannelGoneError(options.only);

    let lastError: unknown = null;
    const routes = model.channels;
    if (options.only !== undefined) {
      const served = await this.tryChannel(options.only, model.type, call, options, true);
      if (served.ok) return served.served;
      throw served.error;
    }
    if (routes.length === 1) {
      // The one-channel model, as cheap as before routing: no generator, no array. Its channel
      // obeys its health as one of several does; with nowhere to fail over to, a skip answers as
      // every channel unusable does (unavailable).
      const served = await this.tryChannel(routes[0]!.name, model.type, call, options);
      if (served.ok) return served.served;
      lastError = served.error;
    } else {
      for (const name of attemptOrder(routes, this.random)) {
        const served = await this.tryChannel(name, model.type, call, options);
        if (served.ok) return served.served;
        if (served.error !== SKIPPED) lastError = served.error;
      }
    }
    if (lastError !== null && lastError !== SKIPPED) throw lastError;
    throw this.unavailable(model);
  }

  /** One attempt on one channel, unless the channel is not to be asked now (SKIPPED). */
  private async tryChannel<T>(
    name: string,
    type: string,
    call: (channel: Channel) => Promise<T>,
    options: AttemptOptions,
    /**
     * The channel holds the call's provider state (`only`): asked as it is, since no other
     * channel could answer. Otherwise it is skipped unless enabled, able to serve the type and
     * admitted by its health, whether it is the model's only channel or one of several.
     */
    pinned = false,
  ): Promise<{ ok: true; served: Served<T> } | { ok: false; error: unknown }> {
    if (!pinned && (!this.upstreams.isEnabled(name) || !this.upstreams.canServe(name, type) || this.book.admit(name) === 'no')) return SKIP;
    const started = performance.now();
    const channel = this.upstreams.channel(name);
    const credentialsSince = this.upstreams.credentialsSince(name);
    try {
      const value = await call(channel);
      this.book.succeeded(name, Math.round(performance.now() - started));
      return { ok: true, served: { value, channel: name } };
    } catch (err) {
      if (options.signal?.aborted || isAbortError(err)) {
        this.book.released(name);
        throw err;
      }
      const verdict = classifyFailure(err, options.outcomeMatters === true);
      if (verdict.failover && !this.upstreams.isCurrent(channel)) {
        // The channel's configuration changed while this call ran on the old one (a rotation): its
        // failure, a 401 of the revoked key above all, says nothing of the channel as it is now.
        this.book.released(name);
        this.observer.failover(name, verdict.reason);
        return { ok: false, error: err };
      }
      if (!verdict.failover) {
        // The provider answered (a refusal of the request is an answer): the channel is fine. A 5xx
        // here is a submit's unknown outcome, no verdict on the channel, as a timeout is.
        if (err instanceof UpstreamError && err.kind === 'http' && err.status < 500) this.book.succeeded(name);
        else this.book.released(name);
        throw err;
      }
      const retryAfter = err instanceof UpstreamError ? retryAfterMs(err.retryAfter, this.now(), Number.MAX_SAFE_INTEGER) : null;
      const refused = verdict.reason === 'credentials_refused';
      this.book.failed(name, verdict.reason, retryAfter, refused ? credentialRefusal((err as UpstreamError).status as 401 | 403, name).message : undefined, refused ? credentialsSince : undefined);
      this.observer.failover(name, verdict.reason);
      return { ok: false, error: err };
    }
  }

  /**
   * The answer for a model none of whose channels would be asked however long the caller waits
   * (each disabled by an operator, or refused its credentials): the 502 attempt would give, known
   * before anything is reserved. Null when a channel may be asked (cooling down and open circuits
   * are attempt's to judge). A map lookup or two for the one-channel model.
   */
  refusal(model: ModelEntry): UpstreamError | null {
    for (const route of model.channels) {
      if (this.upstreams.isEnabled(route.name) && this.upstreams.canServe(route.name, model.type) && this.book.waitMs(route.name) !== null) return null;
    }
    return allDisabled(model.id);
  }

  private unavailable(model: ModelEntry): UpstreamError {
    let shortest: number | null = null;
    for (const route of model.channels) {
      if (!this.upstreams.isEnabled(route.name) || !this.upstreams.canServe(route.name, model.type)) continue;
      const wait = this.book.waitMs(route.name);
      if (wait !== null && (shortest === null || wait < shortest)) shortest = wait;
    }
    if (shortest === null) return allDisabled(model.id);
    return new ChannelsBusyError(model.id, Math.max(1, Math.ceil(shortest / 1000)));
  }

  /**
   * The channel's health in this process (GET /admin/v1/channels shows it). `disabledByOperator`:
   * the operator's word as the caller read it (the channels read model, which an admin answer must
   * agree with before this process has applied it); by default, as this process has applied it.
   */
  health(name: string, disabledByOperator: string | null = this.upstreams.disabledReason(name)): ChannelHealth {
    return this.book.health(name, disabledByOperator);
  }

  /** A transition another process appended (health-log.ts follows the log). */
  apply(event: ChannelHealthEvent): void {
    if (event.type === 'ChannelCredentialsRefused' && this.refusedOlderCredentials(event.data.channel, event.data.credentials_since)) return;
    this.book.apply(event);
  }

  /**
   * Another process refused credentials this one has already replaced (it applied a rotation first,
   * or the other had not yet): the refusal says nothing of the channel here.
   */
  private refusedOlderCredentials(name: string, refusedSince: string | undefined): boolean {
    const current = this.upstreams.credentialsSince(name);
    return refusedSince !== undefined && current !== undefined && Date.parse(refusedSince) < Date.parse(current);
  }
}

const SKIPPED = Symbol('skipped');
const SKIP = { ok: false, error: SKIPPED } as const;

function isAbortError(err: unknown): boolean {
  return (err as { name?: string } | null)?.name === 'AbortError' || (err as { code?: string } | null)?.code === 'UND_ERR_ABORTED';
}
