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
  return charge(
    [
      [inputTokens, pricing.input_per_million],
      [outputTokens, pricing.output_per_million],
    ],
    1_000_000,
  );
}
