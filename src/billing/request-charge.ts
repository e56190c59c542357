import type { AccountService } from '../accounts/service';
import { newId } from '../ids';
import type { Logger } from '../log';
import type { Pricing } from './money';
import { chargeChannels } from './serving-channels';
import type { SettlementJournal } from './settlement-journal';

export interface ReserveInput {
  accountId: string;
  amount: number;
  requestId: string;
  model: string;
  actor: string;
  endpoint: string;
  ttlMs: number;
}

/**
 * The money side of one synchronous request: reserve an upper bound before calling the upstream,
 * then close the reservation exactly once, by settling actual usage or releasing it. `finish()`
 * in a finally block guarantees the close even on paths nobody thought of; if the process dies
 * first, the reconciler releases it when it expires.
 *
 * A charge reserved `early` is handed out as soon as the account has accepted the reservation,
 * while its event is still being committed, so that the upstream call runs alongside the commit
 * instead of after it. The commit can still fail (the database fails, or another process spent
 * the balance first and the retry refuses): then `signal` aborts the upstream call, `confirmed()`
 * rejects with that failure, there is nothing to close, and the request fails as it would have
 * before the call. So nothing may reach the client before `confirmed()`: a settlement waits for it
 * here, and the frame (`metered`) waits for it before an answer goes out.
 *
 * A settlement goes through the SettlementJournal: once the usage is known it is never lost to a
 * database that went away, and the request goes on as settled.
 */
export class RequestCharge {
  private closing: Promise<void> | null = null;
  /** The channel that served the request's main call, once one did (servedBy). */
  private channel: string | null = null;
  /** The channels that served the request's other calls (partServedBy), in order of first use. */
  private readonly channels = new Set<string>();
  private failed: { readonly cause: unknown } | null = null;
  private usage: Readonly<Record<string, unknown>> | null = null;

  private constructor(
    private readonly accounts: AccountService,
    private readonly settlements: Pick<SettlementJournal, 'settle'>,
    /** The request's logger, read only when there is something to log (it is made on first use). */
    private readonly logs: { readonly logger: Logger },
    private readonly input: ReserveInput,
    readonly reservationId: string,
    private readonly committed: Promise<void>,
    /** Aborted when the client leaves or the reservation fails to commit; the work passes it to its upstream calls. */
    readonly signal: AbortSignal,
  ) {}

  /** `abort` is the request's: the frame aborts it when the client leaves, the charge when its reservation fails to commit. */
  static reserve(
    accounts: AccountService,
    settlements: Pick<SettlementJournal, 'settle'>,
    logs: { readonly logger: Logger },
    input: ReserveInput,
    options: { early: boolean; abort: AbortController },
  ): Promise<RequestCharge> {
    const purpose = { kind: 'request', ref: input.requestId, description: input.model, model: input.model, actor: input.actor, endpoint: input.endpoint } as const;
    const reservationId = newId('rsv');
    const { abort } = options;
    return new Promise((resolve, reject) => {
      let charge: RequestCharge | null = null;
      let commit!: { resolve: () => void; reject: (err: unknown) => void };
      const committed = new Promise<void>((res, rej) => (commit = { resolve: res, reject: rej }));
      // Rejections are read through confirmed(), settle() and `failure`; this one must not count as unhandled.
      committed.catch(() => undefined);
      const handOut = (): void => {
        charge ??= new RequestCharge(accounts, settlements, logs, input, reservationId, committed, abort.signal);
        resolve(charge);
      };
      accounts
        .reserve({ accountId: input.accountId, amount: input.amount, purpose, ttlMs: input.ttlMs, reservationId }, { requestId: input.requestId }, options.early ? handOut : undefined)
        .then(
          () => {
            commit.resolve();
            handOut();
          },
          (err: unknown) => {
            if (charge) charge.failed = { cause: err };
            commit.reject(err);
            if (!charge) return reject(err);
            // An abort, not the cause: the upstream call is stopped, not failed (its metrics say
            // `aborted`); the cause is the request's answer, from `failure`.
            abort.abort(new DOMException('the reservation did not commit', 'AbortError'));
          },
        );
    });
  }

  get closed(): boolean {
    return this.closing !== null;
  }

  /** Why the reservation did not commit, once that is known; null while it is committing or after it did. */
  get failure(): unknown {
    return this.failed?.cause ?? null;
  }

  /** Resolves once the reservation is durable; rejects with the reason it is not. */
  confirmed(): Promise<void> {
    return this.committed;
  }

  /**
   * Names the upstream channel that served the request (the router's pick, after any failover):
   * the settlement records it. Attempts on other channels before it cost nothing: they add no
   * reservation and no settlement, the one reservation is settled once.
   */
  servedBy(channel: string): void {
    this.channel = channel;
  }

  /**
   * Names a channel that served one of several calls the request's one charge covers (a
   * screening's searches): the settlement lists it beside the main call's (chargeChannels).
   */
  partServedBy(channel: string): void {
    this.channels.add(channel);
  }

  /** The usage of the settlement, once `settle` closed the reservation; null while open or when released. */
  get settledUsage(): Readonly<Record<string, unknown>> | null {
    return this.usage;
  }

  /** Charges what `pricing` comes to, for `usage`, once the reservation is durable. Later settle or release calls are no-ops. */
  settle(pricing: Pricing, usage: Record<string, unknown>): Promise<void> {
    const { accountId, requestId } = this.input;
    if (this.closing === null) this.usage = usage;
    const served = chargeChannels(this.channel, this.channels);
    this.closing ??= this.committed
      .then(() => this.settlements.settle({ accountId, reservationId: this.reservationId, pricing, usage, requestId, served }))
      .then(() => undefined);
    return this.closing;
  }

  /**
   * Releases the reservation once it is durable; nothing to do when it failed to commit. After a
   * settle, returns that settle's outcome (a rejection included), as any later close does.
   */
  release(reason: string): Promise<void> {
    this.closing ??= this.committed.then(
      () => this.accounts.release(this.input.accountId, this.reservationId, reason, { requestId: this.input.requestId }).then(() => undefined),
      () => undefined,
    );
    return this.closing;
  }

  /** Releases the reservation if nothing closed it; logs instead of throwing (it runs in finally). */
  async finish(): Promise<void> {
    try {
      await this.release('request ended without a settlement');
    } catch (err) {
      if (this.failed) return;
      this.logs.logger.error({ err, reservationId: this.reservationId }, 'could not close a reservation; the reconciler will release it');
    }
  }
}
