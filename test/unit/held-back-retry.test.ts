import { expect } from 'chai';
import { nextHeldBackRetryMs } from '../../src/eventstore/postgres/store';

describe('log subscriptions behind a long transaction re-read on a short leash', () => {
  function pauses(pollIntervalMs: number, n: number): number[] {
    const seen = [5];
    while (seen.length < n) seen.push(nextHeldBackRetryMs(seen[seen.length - 1]!, pollIntervalMs));
    return seen;
  }

  it('doubles from 5 ms up to 250 ms, however long the fallback poll interval', () => {
    expect(pauses(60_000, 10)).to.deep.equal([5, 10, 20, 40, 80, 160, 250, 250, 250, 250]);
  });

  it('never waits longer than the poll interval itself', () => {
    expect(pauses(50, 6)).to.deep.equal([5, 10, 20, 40, 50, 50]);
  });
});
