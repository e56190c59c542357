import { expect } from 'chai';
import { ApiKeyCache } from '../../src/accounts/key-cache';
import type { EventStore, GlobalPosition } from '../../src/eventstore/port';
import { createLogger } from '../../src/log';

interface Key {
  readonly keyId: string;
  readonly accountId: string;
}

/** A read model the test moves by hand: positions up to `at` are folded. */
function readModel() {
  let at = 0n;
  const waiters: (() => void)[] = [];
  return {
    reached: async (position: GlobalPosition): Promise<boolean> => {
      if (position.minor <= at) return true;
      await new Promise<void>((resolve) => waiters.push(resolve));
      return position.minor <= at;
    },
    advanceTo(minor: bigint) {
      at = minor;
      for (const w of waiters.splice(0)) w();
    },
  };
}

const pos = (minor: bigint): GlobalPosition => ({ major: 1n, minor });
const key: Key = { keyId: 'key_1', accountId: 'acct_1' };

/** An empty log that never delivers: the key events of these tests are handed to the cache directly. */
const quietLog = {
  headPosition: async () => null,
  subscribe: () => ({ done: new Promise<void>(() => undefined), close: async () => undefined }),
} as unknown as EventStore;

/** A cache that follows the (quiet) log, so that it caches. */
async function followingCache(model: ReturnType<typeof readModel>, capacity?: number): Promise<ApiKeyCache<Key>> {
  const cache = new ApiKeyCache<Key>(model.reached, capacity);
  await cache.follow(quietLog, createLogger('silent')).started;
  return cache;
}

describe('ApiKeyCache', () => {
  it('answers a known key from memory after the first lookup', async () => {
    const cache = await followingCache(readModel());
    let loads = 0;
    const load = async () => {
      loads++;
      return key;
    };
    expect(await cache.lookup('h1', load)).to.deep.equal(key);
    expect(await cache.lookup('h1', load)).to.deep.equal(key);
    expect(loads).to.equal(1);
    expect(cache.stats()).to.include({ size: 1, hits: 1, misses: 1 });
  });

  it('never caches an unknown key (a key issued elsewhere is found by the next lookup)', async () => {
    const cache = await followingCache(readModel());
    let stored: Key | null = null;
    expect(await cache.lookup('h1', async () => stored)).to.equal(null);
    stored = key;
    expect(await cache.lookup('h1', async () => stored)).to.deep.equal(key);
  });

  it('refuses a revoked key at once, even while the read model still shows it, and caches again once it has folded the revocation', async () => {
    const model = readModel();
    const cache = await followingCache(model);
    let row: Key | null = key;
    const load = async () => row;
    await cache.lookup('h1', load);
    const settled = cache.keysChanged([{ type: 'ApiKeyRevoked', data: { keyId: 'key_1', at: 'now' } }], pos(5n));
    // The read model lags: it still returns the key, and the cache refuses it.
    expect(await cache.lookup('h1', load)).to.equal(null);
    expect(cache.stats().size).to.equal(0);
    row = null;
    model.advanceTo(5n);
    await settled;
    expect(await cache.lookup('h1', load)).to.equal(null);
    row = { keyId: 'key_2', accountId: 'acct_1' };
    await cache.lookup('h2', load);
    expect(cache.stats().size).to.equal(1);
  });

  it('refuses a regenerated key under any hash but its newest while the read model lags, and admits the newest once it has folded it', async () => {
    const model = readModel();
    const cache = await followingCache(model);
    // The lagging read model finds the key under its old hash, and not yet under the new ones.
    let rows: Record<string, Key> = { old: key };
    const load = (hash: string) => async () => rows[hash] ?? null;
    expect(await cache.lookup('old', load('old'))).to.deep.equal(key);
    const first = cache.keysChanged([{ type: 'ApiKeySecretRegenerated', data: { keyId: 'key_1', keyHash: 'new1', keyPrefix: 'tr-new1', at: 'now' } }], pos(5n));
    const second = cache.keysChanged([{ type: 'ApiKeySecretRegenerated', data: { keyId: 'key_1', keyHash: 'new2', keyPrefix: 'tr-new2', at: 'now' } }], pos(6n));
    expect(await cache.lookup('old', load('old'))).to.equal(null);
    // The view has folded the first regeneration only: its hash is no longer the key's either.
    rows = { new1: key };
    model.advanceTo(5n);
    await first;
    expect(await cache.lookup('new1', load('new1'))).to.equal(null);
    rows = { new2: key };
    model.advanceTo(6n);
    await second;
    expect(await cache.lookup('old', load('old'))).to.equal(null);
    expect(await cache.lookup('new2', load('new2'))).to.deep.equal(key);
  });

  it('reads a changed key again once the read model has the change, so a narrowed key never passes on its old settings', async () => {
    const model = readModel();
    const cache = await followingCache(model);
    let row: Key = key;
    await cache.lookup('h1', async () => row);
    cache.keysChanged([{ type: 'ApiKeyChanged', data: { keyId: 'key_1' } }], pos(4n));
    const narrowed: Key = { keyId: 'key_1', accountId: 'acct_narrowed' };
    let answered: Key | null | undefined;
    const lookup = cache.lookup('h1', async () => row).then((k) => (answered = k));
    // The read model still shows the old settings: the lookup waits rather than answer with them.
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).to.equal(undefined);
    row = narrowed;
    model.advanceTo(4n);
    await lookup;
    expect(answered).to.deep.equal(narrowed);
  });

  it('caches nothing while any key change is not in the read model yet (a change it does not know the meaning of included)', async () => {
    const model = readModel();
    const cache = await followingCache(model);
    const settled = cache.keysChanged([{ type: 'ApiKeyBudgetChanged', data: { keyId: 'key_1' } }], pos(3n));
    expect(await cache.lookup('h1', async () => key)).to.deep.equal(key);
    expect(cache.stats().size).to.equal(0);
    model.advanceTo(3n);
    await settled;
    await cache.lookup('h1', async () => key);
    expect(cache.stats().size).to.equal(1);
  });

  it('does not keep the answer of a lookup that a key change overtook', async () => {
    const model = readModel();
    model.advanceTo(10n);
    const cache = await followingCache(model);
    let release!: () => void;
    const slowLoad = () => new Promise<Key>((resolve) => (release = () => resolve(key)));
    const lookup = cache.lookup('h1', slowLoad);
    await cache.keysChanged([{ type: 'ApiKeyUpdated', data: { keyId: 'key_1' } }], pos(7n));
    release();
    expect(await lookup).to.deep.equal(key);
    expect(cache.stats().size).to.equal(0);
  });

  it('caches nothing before it follows the log', async () => {
    const cache = new ApiKeyCache<Key>(readModel().reached);
    await cache.lookup('h1', async () => key);
    expect(cache.stats().size).to.equal(0);
  });

  it('drops every key on a key event that names none, and ignores other events', async () => {
    const model = readModel();
    model.advanceTo(10n);
    const cache = await followingCache(model);
    await cache.lookup('h1', async () => key);
    await cache.keysChanged([{ type: 'CreditAdded', data: {} }], pos(1n));
    expect(cache.stats().size).to.equal(1);
    await cache.keysChanged([{ type: 'ApiKeysRotated', data: {} }], pos(1n));
    expect(cache.stats().size).to.equal(0);
  });

  it('holds at most its capacity, dropping the least recently used key', async () => {
    const cache = await followingCache(readModel(), 2);
    const k = (id: string) => async () => ({ keyId: id, accountId: 'a' });
    await cache.lookup('h1', k('1'));
    await cache.lookup('h2', k('2'));
    await cache.lookup('h1', k('1'));
    await cache.lookup('h3', k('3'));
    expect(cache.stats().size).to.equal(2);
    let loaded = false;
    await cache.lookup('h2', async () => {
      loaded = true;
      return { keyId: '2', accountId: 'a' };
    });
    expect(loaded, 'h2 was the least recently used').to.equal(true);
  });
});
