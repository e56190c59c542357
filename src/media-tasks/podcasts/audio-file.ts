import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import type { FileStore, StoredFile } from '../../files/store';
import type { PodcastAudioEncoding } from '../../upstreams/podcast-synthesis';

/**
 * A podcast's audio file, written into the file store as the provider's audio arrives: MP3 frames
 * straight to the file's key; raw PCM first to a staging file beside it, then as a WAV file (its
 * header holds the length of the whole episode, known only at the end). A synthesis that fails
 * or is abandoned leaves no file: the store's write is atomic, the staging file is deleted.
 */

/**
 * The file one synthesis run writes: unique to the run, so that two runs of one task (a worker
 * that lost its job's lease while the next took the job over) never write, or delete, each
 * other's file or staging file. The task's artifact records the key of the run that succeeded.
 */
export function podcastAudioKey(taskKind: string, taskId: string, extension: string, run: string = randomUUID()): string {
  return `tasks/${taskKind}/${taskId}/audio-${run}${extension}`;
}

/** The staged samples were gone when the WAV file was to be made of them: the store lost them. */
export class StagedAudioLost extends Error {
  override readonly name = 'StagedAudioLost';
}

type AudioFiles = Pick<FileStore, 'put' | 'open' | 'delete'>;
type Write = (audio: Uint8Array) => Promise<void>;

/** Streams what `produce` writes into the file `key`; the file exists once both are done. */
async function streamInto<T>(files: AudioFiles, key: string, produce: (write: Write) => Promise<T>): Promise<{ result: T; stored: StoredFile }> {
  const body = new PassThrough();
  // The store reports a broken body through `storing`; a failed synthesis destroys the body with
  // its error, maybe before the store has begun reading it, and an 'error' nobody listens to
  // would be thrown out of the process.
  body.on('error', () => undefined);
  const storing = files.put(key, body);
  // Observed by the race below and awaited after; never left unhandled meanwhile.
  storing.catch(() => undefined);
  let result: T;
  try {
    result = await produce(async (audio) => {
      if (!body.write(audio)) await Promise.race([once(body, 'drain'), storing]);
    });
  } catch (err) {
    body.destroy(err instanceof Error ? err : new Error(String(err)));
    await storing.catch(() => undefined);
    throw err;
  }
  body.end();
  return { result, stored: await storing };
}

/** The 44-byte header of a PCM WAV file holding `dataBytes` of samples. */
export function wavHeader(dataBytes: number, format: { sampleRate: number; channels: number; bitsPerSample: number }): Buffer {
  const blockAlign = (format.channels * format.bitsPerSample) / 8;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // linear PCM
  header.writeUInt16LE(format.channels, 22);
  header.writeUInt32LE(format.sampleRate, 24);
  header.writeUInt32LE(format.sampleRate * blockAlign, 28);
  header.writeUInt16LE(blockAlign, 32);
  header.writeUInt16LE(format.bitsPerSample, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

async function* headed(header: Buffer, body: Readable): AsyncGenerator<Uint8Array> {
  yield header;
  yield* body;
}

/**
 * Runs `produce`, storing the audio it writes, encoded as `encoding` says, as the file `key`
 * (`…/audio-<run>.wav` for PCM, `…/audio-<run>.mp3` for MP3); resolves with what `produce` resolved and the
 * stored file.
 */
export async function storePodcastAudio<T>(files: AudioFiles, key: string, encoding: PodcastAudioEncoding, produce: (write: Write) => Promise<T>): Promise<{ result: T; stored: StoredFile }> {
  if (encoding.container === 'mp3') return streamInto(files, key, produce);
  const staging = `${key}.pcm`;
  try {
    const { result, stored: pcm } = await streamInto(files, staging, produce);
    const samples = await files.open(staging);
    if (!samples) throw new StagedAudioLost(`the staged audio ${staging} vanished`);
    return { result, stored: await files.put(key, headed(wavHeader(pcm.bytes, encoding), samples)) };
  } finally {
    await files.delete(staging);
  }
}
