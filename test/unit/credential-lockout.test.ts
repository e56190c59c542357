import { expect } from 'chai';
import { CredentialLockout, tooManyFailures, type Attempt } from '../../src/http/credential-lockout';
import { ApiError } from '../../src/http/errors';

describe('CredentialLockout', () => {
  const settings = { maxFailures: 3, windowMs: 60_000, lockoutMs: 300_000, maxAddresses: 100 };
  const validKey = 'tr-' + 'A'.repeat(43);
  const otherKey = 'tr-' + 'B'.repeat(43);
  const sameKeyPrefixGuess = 'tr-' + 'A'.repeat(6) + 'Z'.repeat(37);
  const badKey = (i: number) => 'tr-' + String(i).padStart(6, '0') + 'x'.repeat(37);
  const key = (secret: string | null): Attempt => ({ guessable: false, presented: () => secret });
  const admin: Attempt = { guessable: true, presented: () => 'an-admin-token-guess' };

  /** One request under the lockout: 'served', or the status and Retry-After it was refused with; counts how often the credential was checked. */
  const checks = { count: 0 };
  async function attempt(lockout: CredentialLockout, address: string, tried: Attempt, valid: boolean) {
    try {
      await lockout.admit(address, tried, tooManyFailures, async () => {
        checks.count++;
        if (!valid) throw new ApiError(401, 'invalid_api_key', 'invalid or missing API key');
      });
      return 'served';
    } catch (err) {
      const error = err as ApiError;
      return `${error.status} ${error.options.headers?.['retry-after'] ?? '-'}`;
    }
  }

  it('locks failures from an address at the threshold within the window, for the lockout period only, and serves a valid key all along', async () => {
    let now = 1_000_000;
    const lockout = new CredentialLockout(settings, () => now);
    expect(await attempt(lockout, 'a', key(badKey(1)), false)).to.equal('401 -');
    expect(await attempt(lockout, 'a', key(badKey(2)), false)).to.equal('401 -');
    expect(await attempt(lockout, 'a', key(null), false), 'a missing key counts too; the failure that locks is answered as before').to.equal('401 -');
    expect(await attempt(lockout, 'a', key(validKey), true), 'a valid key from the locked address').to.equal('served');
    expect(await attempt(lockout, 'a', key(badKey(4)), false)).to.equal('429 300');
    expect(await attempt(lockout, 'b', key(badKey(5)), false), 'another address').to.equal('401 -');
    now += 299_500;
    expect(await attempt(lockout, 'a', key(badKey(6)), false), 'rounded up, never 0').to.equal('429 1');
    now += 500;
    expect(await attempt(lockout, 'a', key(badKey(7)), false), 'after the lockout').to.equal('401 -');
  });

  it('checks every credential, valid or not, whatever the lockout holds', async () => {
    const lockout = new CredentialLockout(settings, () => 0);
    checks.count = 0;
    for (let i = 0; i < 10; i++) await attempt(lockout, 'a', key(badKey(i)), false);
    await attempt(lockout, 'a', key(validKey), true);
    expect(checks.count).to.equal(11);
  });

  it('counts failures by the key prefix tried, from any address, without refusing that prefix\'s valid key', async () => {
    const lockout = new CredentialLockout(settings, () => 0);
    for (const address of ['a', 'b']) expect(await attempt(lockout, address, key(sameKeyPrefixGuess), false)).to.equal('401 -');
    expect(await attempt(lockout, 'c', key(sameKeyPrefixGuess), false)).to.equal('401 -');
    expect(await attempt(lockout, 'd', key(sameKeyPrefixGuess), false), 'the prefix is locked wherever it comes from').to.equal('429 300');
    expect(await attempt(lockout, 'd', key(validKey), true), 'the valid key with that prefix').to.equal('served');
    expect(await attempt(lockout, 'd', key(otherKey), false), 'another prefix from a fresh address').to.equal('401 -');
  });

  it('refuses the admin token unchecked from an address that failed it too often, and only for it', async () => {
    const lockout = new CredentialLockout(settings, () => 0);
    for (let i = 0; i < 3; i++) await attempt(lockout, 'a', key(badKey(i)), false);
    checks.count = 0;
    expect(await attempt(lockout, 'a', admin, true), 'failed keys do not lock out the admin token').to.equal('served');
    expect(await attempt(lockout, 'b', admin, false)).to.equal('401 -');
    expect(await attempt(lockout, 'b', admin, false)).to.equal('401 -');
    expect(await attempt(lockout, 'b', admin, false)).to.equal('401 -');
    const before = checks.count;
    expect(await attempt(lockout, 'b', admin, true), 'not even the right token is tested').to.equal('429 300');
    expect(checks.count).to.equal(before);
    expect(await attempt(lockout, 'b', key(validKey), true), 'a valid key from that address').to.equal('served');
    expect(await attempt(lockout, 'c', admin, true), 'the admin token from another address').to.equal('served');
  });

  it('passes on errors other than a refused credential without counting them', async () => {
    const lockout = new CredentialLockout({ ...settings, maxFailures: 1 }, () => 0);
    const failure = lockout.admit('a', key(null), tooManyFailures, () => Promise.reject(new Error('database down')));
    await failure.then(
      () => expect.fail('resolved'),
      (err: Error) => expect(err.message).to.equal('database down'),
    );
    expect(lockout.size).to.equal(0);
  });

  it('forgets failures older than the window', async () => {
    let now = 0;
    const lockout = new CredentialLockout(settings, () => now);
    await attempt(lockout, 'a', key(null), false);
    await attempt(lockout, 'a', key(null), false);
    now += 60_000;
    expect(await attempt(lockout, 'a', key(null), false)).to.equal('401 -');
    expect(await attempt(lockout, 'a', key(null), false)).to.equal('401 -');
    expect(await attempt(lockout, 'a', key(null), false)).to.equal('401 -');
    expect(await attempt(lockout, 'a', key(null), false)).to.equal('429 300');
  });

  it('tracks at most maxAddresses entries, forgetting the least recently failed first', async () => {
    const lockout = new CredentialLockout({ ...settings, maxFailures: 2, maxAddresses: 3 }, () => 0);
    for (const address of ['a', 'b', 'c', 'd', 'e']) await attempt(lockout, address, key(null), false);
    expect(lockout.size).to.equal(3);
    // A second failure locks an address whose first one is remembered (the third is refused), and not one whose first was forgotten.
    const remembered = [await attempt(lockout, 'e', key(null), false), await attempt(lockout, 'e', key(null), false)];
    const forgotten = [await attempt(lockout, 'a', key(null), false), await attempt(lockout, 'a', key(null), false)];
    expect([remembered, forgotten]).to.deep.equal([['401 -', '429 300'], ['401 -', '401 -']]);
  });

  it('keeps an address\'s admin-token lock however many key prefixes that address fails afterwards', async () => {
    const lockout = new CredentialLockout({ ...settings, maxAddresses: 3 }, () => 0);
    for (let i = 0; i < 3; i++) await attempt(lockout, 'a', admin, false);
    for (let i = 0; i < 10; i++) await attempt(lockout, 'a', key(badKey(i)), false);
    checks.count = 0;
    expect(await attempt(lockout, 'a', admin, true), 'the right token, unchecked').to.equal('429 300');
    expect(checks.count).to.equal(0);
    expect(lockout.size, 'each kind bounded: the address, its admin tokens, 3 of the 10 prefixes').to.equal(5);
  });

  it('checks every key of a locked address, so a valid key not cached yet is served at once, while its failures stay locked out', async () => {
    const lockout = new CredentialLockout(settings, () => 0);
    let queries = 0;
    /** A key check as the API key credential makes it: the cache, else the database. */
    const lookUp = (address: string, valid: boolean) =>
      lockout
        .admit(address, key(badKey(9)), tooManyFailures, async () => {
          queries++;
          if (!valid) throw new ApiError(401, 'invalid_api_key', 'invalid or missing API key');
        })
        .then(
          () => 'served',
          (err: ApiError) => `${err.status} ${err.options.headers?.['retry-after'] ?? '-'}`,
        );
    for (let i = 0; i < 3; i++) await lookUp('a', false);
    const locked = [];
    for (let i = 0; i < 5; i++) locked.push(await lookUp('a', false));
    expect(locked).to.deep.equal(Array(5).fill('429 300'));
    expect(await lookUp('a', true), 'a valid key, however many failures came before').to.equal('served');
    expect(queries, 'every attempt checked').to.equal(9);
  });
  it('does nothing with a threshold of 0', async () => {
    const lockout = new CredentialLockout({ ...settings, maxFailures: 0 }, () => 0);
    for (let i = 0; i < 100; i++) expect(await attempt(lockout, 'a', key(badKey(i)), false)).to.equal('401 -');
    expect(lockout.size).to.equal(0);
  });
});
