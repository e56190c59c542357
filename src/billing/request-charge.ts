import type { AccountService } from '../accounts/service';
import type { Logger } from '../log';
import type { Pricing } from './money';

/**
 * The money side of one synchronous request: reserve an upper bound before calling the upstream,
 * then close the reservation exactly once, by settling actual usage or releasing it. `finish()`
 * in a finally block guarantees the close even on paths nobody thought of; if the process dies
 * first, the reconciler releases the reservation when it expires.
 */
export class RequestCharge {
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly accounts: AccountService,
    private readonly logger: Logger,
    readonly accountId: string,
    readonly reservationId: string,
    readonly reserved: number,
    private readonly requestId: string,
  ) {}

  static async reserve(
    accounts: AccountService,
    logger: Logger,
    input: { accountId: string; amount: number; requestId: string; model: string; actor: string; endpoint: string; ttlMs: number },
  ): Promise<RequestCharge> {
    const purpose = { kind: 'request', ref: input.requestId, description: input.model, model: input.model, actor: input.actor, endpoint: input.endpoint } as const;
    const reservationId = await accounts.reserve({ accountId: input.accountId, amount: input.amount, purpose, ttlMs: input.ttlMs }, { requestId: input.requestId });
    return new RequestCharge(accounts, logger, input.accountId, reservationId, input.amount, input.requestId);
  }

  get closed(): boolean {
    return this.closing !== null;
  }

  /** Charges what `pricing` comes to, for `usage`. Later settle or release calls are no-ops. */
  settle(pricing: Pricing, usage: Record<string, unknown>): Promise<void> {
    this.closing ??= this.accounts.settle(this.accountId, this.reservationId, pricing, usage, { requestId: this.requestId }).then(() => undefined);
    return this.closing;
  }

  release(reason: string): Promise<void> {
    this.closing ??= this.accounts.release(this.accountId, this.reservationId, reason, { requestId: this.requestId }).then(() => undefined);
    return this.closing;
  }

  /** Releases the reservation if nothing closed it; logs instead of throwing (it runs in finally). */
  async finish(): Promise<void> {
    try {
      await this.release('request ended without a settlement');
    } catch (err) {
      this.logger.error({ err, reservationId: this.reservationId }, 'could not close a reservation; the reconciler will release it');
    }
  }
}
