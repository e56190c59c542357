import { expect } from 'chai';
import { billableSeconds, isRefusal, startedUnits } from '../../src/tasks/upstream-task';
import { isCredentialRefusal, UpstreamError } from '../../src/upstreams/channel';

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

describe('a provider refusing the gateway\'s own credentials', () => {
  it('is not a refusal of the task (final) but waits, retried, for the operator to mend the key', () => {
    expect([400, 404, 422].map((status) => isRefusal(new UpstreamError(status, 'no')))).to.deep.equal([true, true, true]);
    expect([401, 403].map((status) => isRefusal(new UpstreamError(status, 'no')))).to.deep.equal([false, false]);
    expect([401, 403].map((status) => isCredentialRefusal(new UpstreamError(status, 'no')))).to.deep.equal([true, true]);
    expect([400, 429, 500, 0].map((status) => isCredentialRefusal(new UpstreamError(status, 'no')))).to.deep.equal([false, false, false, false]);
  });
});
