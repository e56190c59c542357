import { priceLine, pricingOf, type Pricing } from '../../src/billing/money';

/** A charge of `amount` priced as that many units at 1 minor unit each: for tests that only care about the amount. */
export function units(amount: number): Pricing {
  return pricingOf(priceLine({ units: amount }, { units: 1 }));
}
