import { expect } from 'chai';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LocalFileStore } from '../../src/files/store';
import { podcastAudioKey, storePodcastAudio, wavHeader } from '../../src/media-tasks/podcasts/audio-file';

/**
 * Two runs of one podcast task's synthesis at once (a worker that lost its job's lease still
 * running while another took the poll over), against the real local file store: each run's file
 * holds its own samples under its own WAV header, and neither run's staging is taken by the other.
 */
describe('podcast audio files: two runs of one task at once', () => {
  let root: string;
  before(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'podcast-runs-'));
  });
  after(async () => fs.rm(root, { recursive: true, force: true }));

  it('keep their files apart: each whole, neither overwritten nor its staging deleted by the other', async () => {
    const files = new LocalFileStore(root);
    const encoding = { container: 'pcm' as const, sampleRate: 24_000, channels: 1, bitsPerSample: 16 };
    // The runs take turns: A writes, B writes, A finishes while B is still writing, then B.
    let letB!: () => void;
    let letA!: () => void;
    const bMayWrite = new Promise<void>((resolve) => (letB = resolve));
    const aMayFinish = new Promise<void>((resolve) => (letA = resolve));
    const samplesA = Buffer.alloc(4800, 0x11);
    const samplesB = Buffer.alloc(9600, 0x22);
    const runA = storePodcastAudio(files, podcastAudioKey('podcast', 'pod_1', '.wav'), encoding, async (write) => {
      await write(samplesA.subarray(0, 2400));
      letB();
      await aMayFinish;
      await write(samplesA.subarray(2400));
      return 'A';
    });
    const runB = storePodcastAudio(files, podcastAudioKey('podcast', 'pod_1', '.wav'), encoding, async (write) => {
      await bMayWrite;
      await write(samplesB.subarray(0, 4800));
      letA();
      await runA.catch(() => undefined);
      await write(samplesB.subarray(4800));
      return 'B';
    });
    const [a, b] = await Promise.all([runA, runB]);
    expect(a.stored.key).to.not.equal(b.stored.key);
    for (const [run, samples] of [[a, samplesA], [b, samplesB]] as const) {
      expect(run.stored.key).to.match(/^tasks\/podcast\/pod_1\/audio-[0-9a-f-]{36}\.wav$/);
      const body = await files.open(run.stored.key);
      const chunks: Buffer[] = [];
      for await (const chunk of body!) chunks.push(Buffer.from(chunk));
      expect(Buffer.concat(chunks).equals(Buffer.concat([wavHeader(samples.length, encoding), samples])), run.result).to.equal(true);
    }
  });
});
