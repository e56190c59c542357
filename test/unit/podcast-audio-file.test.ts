import { expect } from 'chai';
import type { Readable } from 'node:stream';
import { storePodcastAudio } from '../../src/media-tasks/podcasts/audio-file';
import type { StoredFile } from '../../src/files/store';

/**
 * A store that begins reading a body only after a turn of the event loop, as a store that first
 * makes its directory does: a synthesis that fails at once has destroyed the body by then.
 */
function slowStore() {
  const deleted: string[] = [];
  const stored = new Map<string, Buffer>();
  return {
    deleted,
    stored,
    async put(key: string, body: Readable | AsyncIterable<Uint8Array>): Promise<StoredFile> {
      await new Promise((resolve) => setImmediate(resolve));
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(Buffer.from(chunk));
      const bytes = Buffer.concat(chunks);
      stored.set(key, bytes);
      return { key, bytes: bytes.length, sha256: '' } as StoredFile;
    },
    async open(key: string) {
      const bytes = stored.get(key);
      return bytes ? (async function* () { yield bytes; })() : null;
    },
    async delete(key: string) {
      deleted.push(key);
      stored.delete(key);
    },
  };
}

describe('podcast audio files: a synthesis that fails before the store reads its body', () => {
  for (const encoding of [{ container: 'mp3' as const }, { container: 'pcm' as const, sampleRate: 24_000, channels: 1, bitsPerSample: 16 }]) {
    it(`${encoding.container}: rejects with the synthesis's error, throws nothing out of the process, stores nothing`, async () => {
      const files = slowStore();
      const failure = new Error('the provider refused the text');
      const uncaught: unknown[] = [];
      const onUncaught = (err: unknown) => uncaught.push(err);
      process.prependListener('uncaughtException', onUncaught);
      try {
        const outcome = await storePodcastAudio(files as never, 'tasks/podcast/p1/audio.x', encoding, async () => {
          throw failure;
        }).then(
          () => 'stored',
          (err: unknown) => err,
        );
        expect(outcome).to.equal(failure);
        // The store's read, which began after the failure, has ended by now.
        await new Promise((resolve) => setImmediate(resolve));
      } finally {
        process.removeListener('uncaughtException', onUncaught);
      }
      expect(uncaught).to.deep.equal([]);
      expect([...files.stored.keys()]).to.deep.equal([]);
      if (encoding.container === 'pcm') expect(files.deleted).to.deep.equal(['tasks/podcast/p1/audio.x.pcm']);
    });
  }
});
