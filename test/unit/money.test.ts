import { expect } from 'chai';
import { ceilDiv, charge, tokenCharge } from '../../src/billing/money';

describe('money: the one rounding rule', () => {
  it('rounds up once, after summing exact products', () => {
    // 3 × 333,333 + 0 = 999,999 → 1 after dividing by 1,000,000 and rounding up once.
    expect(tokenCharge({ input_per_million: 333_333, output_per_million: 0 }, 3, 0)).to.equal(1);
    // Rounding each term separately would give 1 + 1 = 2.
    expect(tokenCharge({ input_per_million: 500_000, output_per_million: 500_000 }, 1, 1)).to.equal(1);
    expect(tokenCharge({ input_per_million: 2_000_000, output_per_million: 8_000_000 }, 1234, 567)).to.equal(Math.ceil((1234 * 2_000_000 + 567 * 8_000_000) / 1_000_000));
    expect(tokenCharge({ input_per_million: 1_000_000, output_per_million: 1_000_000 }, 0, 0)).to.equal(0);
  });

  it('stays exact beyond the range of float products', () => {
    // 9e15 × 3 overflows exact doubles; the bigint path does not.
    expect(charge([[3_000_000_000_000, 3_000_000]], 1_000_000)).to.equal(9_000_000_000_000);
    expect(ceilDiv(10n ** 30n + 1n, 10n ** 15n)).to.equal(10n ** 15n + 1n);
  });

  it('refuses fractional or negative quantities and prices', () => {
    expect(() => charge([[1.5, 1]])).to.throw(RangeError);
    expect(() => charge([[1, -1]])).to.throw(RangeError);
    expect(() => charge([[Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]])).to.throw(RangeError);
  });
});
