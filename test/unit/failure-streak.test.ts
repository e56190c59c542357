import { expect } from 'chai';
import { FailureStreak } from '../../src/jobs/failure-streak';

describe('FailureStreak: one warning and one recovery per outage, however the claim loops overlap', () => {
  it('starts a streak at the first failure, counts the rest, and reports its length when a claim succeeds', () => {
    const streak = new FailureStreak();
    expect(streak.succeeded(streak.begin()), 'no streak to end').to.equal(0);
    expect(streak.failed(streak.begin())).to.equal('first');
    expect(streak.failed(streak.begin())).to.equal('again');
    expect(streak.count).to.equal(2);
    expect(streak.succeeded(streak.begin())).to.equal(2);
    expect(streak.count).to.equal(0);
  });

  it('ignores a failure of a claim that began before a claim that has since succeeded', () => {
    const streak = new FailureStreak();
    const a = streak.begin();
    const b = streak.begin();
    expect(streak.failed(a)).to.equal('first');
    // The database is back: loop C's claim succeeds while loop B's, begun in the outage, is still out.
    const c = streak.begin();
    expect(streak.succeeded(c)).to.equal(1);
    expect(streak.failed(b), "B's failure is older than C's success").to.equal('stale');
    expect(streak.count).to.equal(0);
    // A claim begun after that success that fails is a new outage.
    expect(streak.failed(streak.begin())).to.equal('first');
  });

  it('lets an older success end a streak but not hide a failure begun after it', () => {
    const streak = new FailureStreak();
    const slow = streak.begin();
    const later = streak.begin();
    expect(streak.failed(later)).to.equal('first');
    expect(streak.succeeded(slow), 'the database answered the slow claim').to.equal(1);
    expect(streak.failed(streak.begin())).to.equal('first');
  });
});
