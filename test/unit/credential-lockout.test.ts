import { expect } from 'chai';
import { CredentialLockout } from '../../src/http/credential-lockout';

describe('CredentialLockout', () => {
  const settings = { maxFailures: 3, windowMs: 60_000, lockoutMs: 300_000, maxAddresses: 100 };

  it('locks an address at the threshold within the window, for the lockout period only', () => {
    let now = 1_000_000;
    const lockout = new CredentialLockout(settings, () => now);
    lockout.recordFailure('a');
    lockout.recordFailure('a');
    expect(lockout.retryAfterSeconds('a')).to.equal(null);
    lockout.recordFailure('a');
    expect(lockout.retryAfterSeconds('a')).to.equal(300);
    expect(lockout.retryAfterSeconds('b'), 'another address').to.equal(null);
    now += 299_500;
    expect(lockout.retryAfterSeconds('a'), 'rounded up, never 0').to.equal(1);
    now += 500;
    expect(lockout.retryAfterSeconds('a')).to.equal(null);
  });

  it('forgets failures older than the window', () => {
    let now = 0;
    const lockout = new CredentialLockout(settings, () => now);
    lockout.recordFailure('a');
    lockout.recordFailure('a');
    now += 60_000;
    lockout.recordFailure('a');
    lockout.recordFailure('a');
    expect(lockout.retryAfterSeconds('a')).to.equal(null);
    lockout.recordFailure('a');
    expect(lockout.retryAfterSeconds('a')).to.equal(300);
  });

  it('tracks at most maxAddresses, forgetting the least recently failed first', () => {
    const lockout = new CredentialLockout({ ...settings, maxFailures: 1, maxAddresses: 3 }, () => 0);
    for (const address of ['a', 'b', 'c', 'd', 'e']) lockout.recordFailure(address);
    expect(lockout.size).to.equal(3);
    expect(['a', 'b', 'c', 'd', 'e'].map((a) => lockout.retryAfterSeconds(a) !== null)).to.deep.equal([false, false, true, true, true]);
  });

  it('does nothing with a threshold of 0', () => {
    const lockout = new CredentialLockout({ ...settings, maxFailures: 0 }, () => 0);
    for (let i = 0; i < 100; i++) lockout.recordFailure('a');
    expect([lockout.retryAfterSeconds('a'), lockout.size]).to.deep.equal([null, 0]);
  });
});
