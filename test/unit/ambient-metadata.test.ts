import { expect } from 'chai';
import { AsyncResource } from 'node:async_hooks';
import { ambientMetadata, withAmbientMetadata } from '../../src/eventstore/ambient-metadata';

/** A promise and the function that resolves it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A call with `metadata` that ends when `ending` settles, and a reader bound inside it: as a timer
 * or a connection opened inside the call would run later, in the call's context.
 */
function startCall(metadata: Record<string, string>, ending: Promise<void>): { call: Promise<void>; readLater: () => unknown } {
  let readLater!: () => unknown;
  const call = withAmbientMetadata(
    () => metadata,
    () => {
      readLater = AsyncResource.bind(() => ambientMetadata());
      return ending;
    },
  );
  return { call, readLater };
}

describe('ambient metadata', () => {
  it('is there inside a call, and gone for work the call started once no call runs', async () => {
    const a = deferred();
    const { call, readLater } = startCall({ via: 'dashboard', session_id: 'a' }, a.promise);
    expect(readLater()).to.deep.equal({ via: 'dashboard', session_id: 'a' });
    a.resolve();
    await call;
    expect(readLater()).to.deep.equal({});
    expect(ambientMetadata()).to.deep.equal({});
  });

  it('stays on while another call runs, for that call only', async () => {
    const b = deferred();
    const c = deferred();
    const first = startCall({ session_id: 'b' }, b.promise);
    const second = startCall({ session_id: 'c' }, c.promise);
    c.resolve();
    await second.call;
    try {
      expect(first.readLater()).to.deep.equal({ session_id: 'b' });
      // Work the ended call started reads nothing, though the storage is still on for the other.
      expect(second.readLater()).to.deep.equal({});
    } finally {
      // A failure above must not leave a call running for the tests after this one.
      b.resolve();
      await first.call;
    }
    expect(first.readLater()).to.deep.equal({});
  });

  it('counts a call that throws, or whose promise rejects, as ended', async () => {
    expect(() => withAmbientMetadata(() => ({ session_id: 'd' }), () => {
      throw new Error('refused');
    })).to.throw('refused');
    const failing = startCall({ session_id: 'e' }, Promise.reject(new Error('failed')));
    await failing.call.catch(() => undefined);
    expect(failing.readLater()).to.deep.equal({});
  });
});
