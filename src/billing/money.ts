/**
 * Money is an integer count of minor units: 1 minor unit = 0.000001 CNY (one micro-yuan), small
 * enough that per-token prices are exact integers. This module holds the one rounding rule:
 * a charge is computed exactly in integers and rounded up once, at the end.
 */
export const MINOR_UNITS_PER_CNY = 1_000_000;

/** ceil(numerator / denominator) for non-negative integers, exactly (bigint, no float). */
export function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  if (numerator < 0n || denominator <= 0n) throw new RangeError('ceilDiv takes a non-negative numerator and a positive denominator');
  return (numerator + denominator - 1n) / denominator;
}

/** Converts an exact bigint amount to a number, refusing anything a JSON client could not hold exactly. */
export function toMinorUnits(amount: bigint): number {
  if (amount > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`amount ${amount} exceeds the largest exact integer`);
  return Number(amount);
}

/** Sum of quantity × unit price terms divided by a common divisor, rounded up once. */
export function charge(terms: readonly (readonly [quantity: number, unitPrice: number])[], divisor = 1): number {
  let total = 0n;
  for (const [quantity, price] of terms) {
    if (!Number.isSafeInteger(quantity) || quantity < 0 || !Number.isSafeInteger(price) || price < 0) {
      throw new RangeError('quantities and prices must be non-negative integers');
    }
    total += BigInt(quantity) * BigInt(price);
  }
  return toMinorUnits(ceilDiv(total, BigInt(divisor)));
}

/** Chat and Responses: ceil((input × input_per_million + output × output_per_million) / 1,000,000). */
export function tokenCharge(pricing: { readonly input_per_million: number; readonly output_per_million: number }, inputTokens: number, outputTokens: number): number {
  return tokenLine(pricing, inputTokens, outputTokens).amount;
}

/**
 * One priced line of a charge: the units counted, the unit price applied to each, and the common
 * divisor; the line's amount is ceil(Σ units × unit_prices / per), the one rounding rule. A unit
 * named in `units` has its price under the same name in `unit_prices`.
 */
export interface PricedLine {
  readonly units: Readonly<Record<string, number>>;
  readonly unit_prices: Readonly<Record<string, number>>;
  readonly per: number;
  readonly amount: number;
}

/**
 * What a settlement charged and how: its lines (one for most charges; a charge made of separately
 * rounded calls, like a multi-part summary or a screening's searches and writer, has one per call)
 * and their sum. A finance reader recomputes every charge from the log with `recomputePricing`.
 */
export interface Pricing {
  readonly amount: number;
  readonly lines: readonly PricedLine[];
}

/** A line priced by the one rounding rule: `units[name] × unit_prices[name]`, summed, over `per`. */
export function priceLine(units: Readonly<Record<string, number>>, unitPrices: Readonly<Record<string, number>>, per = 1): PricedLine {
  const names = Object.keys(units);
  if (names.length !== Object.keys(unitPrices).length || names.some((n) => !(n in unitPrices))) {
    throw new RangeError('every unit needs its unit price and nothing else');
  }
  return { units, unit_prices: unitPrices, per, amount: charge(names.map((n) => [units[n]!, unitPrices[n]!] as const), per) };
}

export function pricingOf(...lines: PricedLine[]): Pricing {
  return { amount: lines.reduce((sum, l) => sum + l.amount, 0), lines };
}

/** The quantities of a charge, summed per unit name over its lines (a usage record's and a request log line's units). */
export function unitsOf(pricing: Pricing | null): Record<string, number> {
  const units: Record<string, number> = {};
  for (const line of pricing?.lines ?? []) for (const [name, quantity] of Object.entries(line.units)) units[name] = (units[name] ?? 0) + quantity;
  return units;
}

/** Nothing charged (a task kind that bills nothing, like an asset verification). */
export const NO_CHARGE: Pricing = { amount: 0, lines: [] };

/** Chat and Responses tokens as a line: `input_tokens` and `output_tokens` at their per-million prices. */
export function tokenLine(pricing: { readonly input_per_million: number; readonly output_per_million: number }, inputTokens: number, outputTokens: number): PricedLine {
  return priceLine({ input_tokens: inputTokens, output_tokens: outputTokens }, { input_tokens: pricing.input_per_million, output_tokens: pricing.output_per_million }, 1_000_000);
}

/**
 * The amount a recorded pricing comes to, computed again from its units and unit prices alone; the
 * audit compares it with the settlement's amount. Throws RangeError on a malformed pricing, and on
 * a line whose stated amount is not what its units and prices come to (the log's per-line figures
 * must be true, not only their sum).
 */
export function recomputePricing(pricing: Pricing): number {
  return pricing.lines.reduce((sum, line) => {
    const amount = priceLine(line.units, line.unit_prices, line.per).amount;
    if (amount !== line.amount) throw new RangeError(`a pricing line states ${line.amount} where its units and prices come to ${amount}`);
    return sum + amount;
  }, 0);
}
