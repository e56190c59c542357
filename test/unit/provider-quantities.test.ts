import { expect } from 'chai';
import { billableSeconds, startedUnits } from '../../src/tasks/upstream-task';

describe('a provider\'s reported quantities, as they bill', () => {
  it('counts started units, and nothing for a report that is not a positive finite number', () => {
    expect([5, 5.04, 0.001, 1e17].map(startedUnits)).to.deep.equal([5, 6, 1, 1e17]);
    for (const report of [undefined, null, 0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5', [5], { seconds: 5 }]) expect(startedUnits(report), String(report)).to.equal(null);
  });

  it('bills seconds no longer than the model takes, and what was reserved when the report gives none', () => {
    expect(billableSeconds(4.2, 4, 12)).to.equal(5);
    expect(billableSeconds(100_000, 4, 12)).to.equal(12);
    expect(billableSeconds('4.2', 4, 12)).to.equal(4);
    expect(billableSeconds(-3, 4, 12)).to.equal(4);
  });
});
