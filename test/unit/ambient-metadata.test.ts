import { expect } from 'chai';
import { AsyncResource } from 'node:async_hooks';
import { ambientMetadata, withAmbientMetadata } from '../../src/eventstore/ambient-metadata';

/** A promise and the function that resolves it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('ambient metadata', () => {
  it('is there inside a call, and gone for work the call started once no call runs', async () => {
    const a = deferred();
    let readLaterInA!: () => unknown;
    const call = withAmbientMetadata(
      () => ({ via: 'dashboard', session_id: 'a' }),
      () => {
        expect(ambientMetadata()).to.deep.equal({ via: 'dashboard', session_id: 'a' });
        // As a timer or a connection opened inside the call would run later: in the call's context.
        readLaterInA = AsyncResource.bind(() => ambientMetadata());
        return a.promise;
      },
    );
    expect(readLaterInA()).to.deep.equal({ via: 'dashboard', session_id: 'a' });
    a.resolve();
    await call;
    expect(readLaterInA()).to.deep.equal({});
    expect(ambientMetadata()).to.deep.equal({});
  });

  it('stays on while another call runs, for that call only', async () => {
    const b = deferred();
    const c = deferred();
    let readLaterInB!: () => unknown;
    const first = withAmbientMetadata(
      () => ({ session_id: 'b' }),
      () => {
        readLaterInB = AsyncResource.bind(() => ambientMetadata());
        return b.promise;
      },
    );
    let readLaterInC!: () => unknown;
    const second = withAmbientMetadata(
      () => ({ session_id: 'c' }),
      () => {
        readLaterInC = AsyncResource.bind(() => ambientMetadata());
        return c.promise;
      },
    );
    c.resolve();
    await second;
    try {
      expect(readLaterInB()).to.deep.equal({ session_id: 'b' });
      // Work the ended call started reads nothing, though the storage is still on for the other.
      expect(readLaterInC()).to.deep.equal({});
    } finally {
      // A failure above must not leave a call running for the tests after this one.
      b.resolve();
      await first;
    }
    expect(readLaterInB()).to.deep.equal({});
  });

  it('counts a call that throws, or whose promise rejects, as ended', async () => {
    expect(() => withAmbientMetadata(() => ({ session_id: 'd' }), () => {
      throw new Error('refused');
    })).to.throw('refused');
    let readLater!: () => unknown;
    const failing = withAmbientMetadata(
      () => ({ session_id: 'e' }),
      () => {
        readLater = AsyncResource.bind(() => ambientMetadata());
        return Promise.reject(new Error('failed'));
      },
    );
    await failing.catch(() => undefined);
    expect(readLater()).to.deep.equal({});
  });
});
