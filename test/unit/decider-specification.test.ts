import { expect } from 'chai';
import { DomainError, type Decider } from '../../src/domain/decider';
import { DeciderSpecification } from '../support/decider-specification';

/** The test helper itself: each step fails when the decider does something else. */
type CounterEvent = { type: 'Added'; data: { n: number } };
const counter: Decider<{ add: number }, CounterEvent, number> = {
  initialState: () => 0,
  decide: ({ add }, total) => {
    if (add < 0) throw new DomainError('negative', 'only additions', { add });
    if (total + add > 10) throw new Error('not a domain error');
    return add === 0 ? [] : [{ type: 'Added', data: { n: add } }];
  },
  evolve: (total, e) => total + e.data.n,
  snapshotVersion: 1,
};
const given = DeciderSpecification.for(counter);
const added = (n: number): CounterEvent => ({ type: 'Added', data: { n } });

describe('DeciderSpecification', () => {
  it('passes when the decider decides what the test says', () => {
    given([added(2)]).when({ add: 3 }).then([added(3)]);
    given([]).when({ add: 0 }).thenNothingHappened();
    given([]).when({ add: -1 }).thenThrows('negative', { add: -1 });
  });

  it('fails on other events, on events where nothing was expected, and on a refusal where events were', () => {
    expect(() => given([]).when({ add: 3 }).then([added(4)])).to.throw(/expected/);
    expect(() => given([]).when({ add: 3 }).thenNothingHappened()).to.throw(/expected/);
    expect(() => given([]).when({ add: -1 }).then([])).to.throw(/refused \(negative\)/);
  });

  it('fails on an accepted command, another code or other details where a refusal was expected, and on an error that is not a DomainError', () => {
    expect(() => given([]).when({ add: 1 }).thenThrows('negative')).to.throw(/accepted/);
    expect(() => given([]).when({ add: -1 }).thenThrows('other')).to.throw(/expected 'negative' to equal 'other'/);
    expect(() => given([]).when({ add: -1 }).thenThrows('negative', { add: -2 })).to.throw(/expected/);
    // The history is folded: 8 given, 3 more breaks the decider's own limit.
    expect(() => given([added(8)]).when({ add: 3 }).thenThrows('anything')).to.throw(/DomainError/);
  });
});
