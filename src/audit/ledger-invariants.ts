import type { RecordedEvent } from '../eventstore/port';
import { recomputePricing, type Pricing } from '../billing/money';
import { ACCOUNT_EVENT_TYPES, accountIdOfStream, upcastAccountEvent, type AccountEvent } from '../domain/account/events';

/**
 * The ledger invariants of ARCHITECTURE.md, checked from the log alone (no read model, no
 * decider): fold every account event, then compare what must hold.
 */
export interface AccountTotals {
  credited: number;
  settled: number;
  refunded: number;
  frozen: number;
  available: number;
}

interface ReservationFate {
  accountId: string;
  amount: number;
  closes: number;
  settledAmount: number;
  refunded: number;
}

export interface InvariantReport {
  readonly totals: ReadonlyMap<string, AccountTotals>;
  readonly violations: readonly string[];
}

const ACCOUNT_TYPES = new Set<string>(ACCOUNT_EVENT_TYPES);

export class LedgerInvariantChecker {
  private readonly totals = new Map<string, AccountTotals>();
  private readonly reservations = new Map<string, ReservationFate>();
  private readonly violations: string[] = [];

  add(raw: RecordedEvent): void {
    if (!raw.streamId.startsWith('account-') || !ACCOUNT_TYPES.has(raw.type)) return;
    const event = raw as RecordedEvent & AccountEvent;
    const accountId = accountIdOfStream(raw.streamId);
    const t = this.totalsOf(accountId);
    const where = `${raw.streamId}@${raw.revision}`;
    switch (event.type) {
      case 'CreditAdded':
        this.requireMoney(event.data.amount, where);
        t.credited += event.data.amount;
        break;
      case 'FundsReserved': {
        this.requireMoney(event.data.amount, where);
        if (this.reservations.has(event.data.reservationId)) this.violations.push(`${where}: reservation ${event.data.reservationId} reserved twice`);
        this.reservations.set(event.data.reservationId, { accountId, amount: event.data.amount, closes: 0, settledAmount: 0, refunded: 0 });
        t.frozen += event.data.amount;
        if (available(t) < 0) this.violations.push(`${where}: reservation ${event.data.reservationId} drove available below zero (${available(t)})`);
        break;
      }
      case 'ReservationSettled': {
        const r = this.closing(event.data.reservationId, accountId, where);
        this.requireMoney(event.data.amount, where);
        if (r && r.amount !== event.data.reservedAmount) this.violations.push(`${where}: settlement names reserved ${event.data.reservedAmount}, reservation was ${r.amount}`);
        if (event.data.overrun !== Math.max(0, event.data.amount - event.data.reservedAmount)) this.violations.push(`${where}: overrun ${event.data.overrun} is inconsistent`);
        const pricing = upcastAccountEvent(event).data.pricing;
        if (pricing) this.requirePricing(pricing, event.data.amount, where);
        if (r) r.settledAmount = event.data.amount;
        t.frozen -= event.data.reservedAmount;
        t.settled += event.data.amount;
        break;
      }
      case 'ReservationReleased': {
        const r = this.closing(event.data.reservationId, accountId, where);
        if (r && r.amount !== event.data.amount) this.violations.push(`${where}: release of ${event.data.amount}, reservation was ${r.amount}`);
        t.frozen -= event.data.amount;
        break;
      }
      case 'ChargeRefunded': {
        const r = this.reservations.get(event.data.reservationId);
        if (!r || r.closes !== 1 || r.refunded + event.data.amount > r.settledAmount) {
          this.violations.push(`${where}: refund ${event.data.refundId} exceeds the settled charge of ${event.data.reservationId}`);
        }
        if (r) r.refunded += event.data.amount;
        t.refunded += event.data.amount;
        break;
      }
      default:
        break;
    }
    t.available = available(t);
  }

  report(): InvariantReport {
    const violations = [...this.violations];
    // One pass over the reservations (not one per account: a log holds millions of them).
    const openByAccount = new Map<string, number>();
    for (const r of this.reservations.values()) if (r.closes === 0) openByAccount.set(r.accountId, (openByAccount.get(r.accountId) ?? 0) + r.amount);
    for (const [accountId, t] of this.totals) {
      if (t.frozen < 0) violations.push(`account ${accountId}: frozen is negative (${t.frozen})`);
      const open = openByAccount.get(accountId) ?? 0;
      if (open !== t.frozen) violations.push(`account ${accountId}: frozen ${t.frozen} differs from open reservations ${open}`);
    }
    return { totals: this.totals, violations };
  }

  private totalsOf(accountId: string): AccountTotals {
    let t = this.totals.get(accountId);
    if (!t) {
      t = { credited: 0, settled: 0, refunded: 0, frozen: 0, available: 0 };
      this.totals.set(accountId, t);
    }
    return t;
  }

  private closing(reservationId: string, accountId: string, where: string): ReservationFate | null {
    const r = this.reservations.get(reservationId);
    if (!r || r.accountId !== accountId) {
      this.violations.push(`${where}: closes unknown reservation ${reservationId}`);
      return null;
    }
    r.closes++;
    if (r.closes > 1) this.violations.push(`${where}: reservation ${reservationId} closed ${r.closes} times`);
    return r;
  }

  /** A settlement's amount must follow from the units and unit prices it records. */
  private requirePricing(pricing: Pricing, amount: number, where: string): void {
    let recomputed: string;
    try {
      const total = recomputePricing(pricing);
      if (total === amount && pricing.amount === amount) return;
      recomputed = `recomputed ${total}`;
    } catch (err) {
      recomputed = (err as Error).message;
    }
    this.violations.push(`${where}: settlement of ${amount} does not follow from its pricing (${recomputed})`);
  }

  private requireMoney(amount: number, where: string): void {
    if (!Number.isSafeInteger(amount) || amount < 0) this.violations.push(`${where}: amount ${amount} is not a non-negative integer of minor units`);
  }
}

function available(t: AccountTotals): number {
  return t.credited - t.settled - t.frozen + t.refunded;
}
