import { countText, yuanText } from './format';
import { perSuffix, unitLabel, type Translate } from './units';

export type { Translate } from './units';

/** A settlement's `pricing` (docs/auditing.md): each line's amount is ceil(Σ units × unit_prices / per). */
export interface PricingLine {
  readonly units: Readonly<Record<string, number>>;
  readonly unit_prices: Readonly<Record<string, number>>;
  readonly per: number;
  readonly amount: number;
}

export interface Pricing {
  readonly amount: number;
  readonly lines: readonly PricingLine[];
}

/** One entry of GET /v1/account/ledger (or the operator's view of an account's ledger). */
export interface LedgerEntry {
  readonly id: string;
  readonly sequence: number;
  readonly type: 'credit' | 'reservation' | 'settlement' | 'release' | 'refund';
  readonly amount: number;
  readonly available_delta: number;
  readonly frozen_delta: number;
  readonly available_after: number;
  readonly frozen_after: number;
  readonly reservation_id: string | null;
  readonly reference: string | null;
  readonly description: string | null;
  readonly key_id: string | null;
  readonly actor: string | null;
  readonly model: string | null;
  readonly endpoint: string | null;
  readonly request_id: string | null;
  readonly task_id: string | null;
  readonly pricing?: Pricing | null;
  readonly created_at: string;
}

/**
 * What a line of the ledger stands for: money in (`credit`, `refund`), a call's charge (`charge`:
 * its reservation and settlement), a call that cost nothing (`released`: its reservation and
 * release), or money held for a call whose outcome is not among the loaded entries (`hold`).
 */
export type LineKind = 'credit' | 'refund' | 'charge' | 'released' | 'hold';

export interface LedgerLine {
  readonly kind: LineKind;
  /** The line's entries, oldest first: one, or a reservation and its settlement or release. */
  readonly entries: readonly LedgerEntry[];
  /** The entry whose place in the ledger the line takes and whose balances it shows: its latest. */
  readonly last: LedgerEntry;
  /** What the line did to the money: + in, − charged; null for a hold or a release, which charge nothing. */
  readonly signed: number | null;
  /** The amount held for the call (its reservation's, or the release's), for holds and releases. */
  readonly held: number | null;
  /** The settlement's pricing, for a charge recorded with one. */
  readonly pricing: Pricing | null;
}

function single(entry: LedgerEntry): LedgerLine {
  const base = { entries: [entry], last: entry, pricing: null };
  switch (entry.type) {
    case 'credit':
      return { ...base, kind: 'credit', signed: entry.amount, held: null };
    case 'refund':
      return { ...base, kind: 'refund', signed: entry.amount, held: null };
    case 'reservation':
      return { ...base, kind: 'hold', signed: null, held: entry.amount };
    case 'release':
      return { ...base, kind: 'released', signed: null, held: entry.amount };
    case 'settlement':
      return { ...base, kind: 'charge', signed: -entry.amount, held: null, pricing: entry.pricing ?? null };
  }
}

/**
 * The loaded entries as the ledger's lines, in the ledger's order. A reservation and its
 * settlement or release (same `reservation_id`) make one line, at the place of the later of the
 * two: that is where the charge took effect, and the balances shown are those after it. A
 * reservation whose outcome is not loaded (the call still runs, or the settlement is on a page not
 * loaded yet, or a filter leaves it out) is a hold of its own; it joins its settlement once that
 * is loaded. A settlement whose reservation is not loaded (a filter, or a date range starting
 * between them) is a charge of its own. Every entry is in exactly one line, once, even when the
 * same entry is given twice (pages loaded again), so nothing is counted twice.
 */
export function ledgerLines(entries: readonly LedgerEntry[]): LedgerLine[] {
  const unique = [...new Map(entries.map((e) => [e.id, e])).values()].sort((a, b) => a.sequence - b.sequence);
  const reservations = new Map<string, LedgerEntry>();
  const outcomes = new Set<string>();
  for (const e of unique) {
    if (!e.reservation_id) continue;
    if (e.type === 'reservation') reservations.set(e.reservation_id, e);
    else if (e.type === 'settlement' || e.type === 'release') outcomes.add(e.reservation_id);
  }
  const lines: LedgerLine[] = [];
  for (const e of unique) {
    if (e.type === 'reservation' && e.reservation_id && outcomes.has(e.reservation_id)) continue;
    const reservation = (e.type === 'settlement' || e.type === 'release') && e.reservation_id ? reservations.get(e.reservation_id) : undefined;
    const line = single(e);
    lines.push(reservation ? { ...line, entries: [reservation, e], held: reservation.amount } : line);
  }
  return lines;
}

/**
 * Why a charge cost what it did, from its pricing: "1,200 input tokens × ¥2.00/M + 300 output
 * tokens × ¥8.00/M". Units of a line that were not used (0) are left out unless the line has no
 * other; the lines of a charge made of several calls are joined by " + " as well.
 */
export function pricingText(pricing: Pricing, t: Translate, locale: string): string {
  const terms = pricing.lines.flatMap((line) => {
    const used = Object.entries(line.units).filter(([, count]) => count !== 0);
    return (used.length > 0 ? used : Object.entries(line.units)).map(([unit, count]) => {
      const price = line.unit_prices[unit];
      const quantity = `${countText(count, locale)} ${unitLabel(unit, t)}`;
      return price === undefined ? quantity : `${quantity} × ${yuanText(price)}${perSuffix(unit, line.per, locale)}`;
    });
  });
  return terms.length === 0 ? '—' : terms.join(' + ');
}
