import { deflateSync } from 'node:zlib';

/**
 * Small but valid media files for the simulated providers, so that downloads, archives and
 * signed links carry real bytes a player or an image viewer accepts.
 */
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG iTXt chunk: `keyword` (Latin-1) and `text` in UTF-8, uncompressed, no language. */
function pngTextChunk(keyword: string, text: string): Buffer {
  return pngChunk('iTXt', Buffer.concat([Buffer.from(keyword, 'latin1'), Buffer.from([0, 0, 0, 0, 0]), Buffer.from(text, 'utf8')]));
}

/** A width × height RGB PNG filled with a colour derived from `seed`, with `text` as iTXt chunks. */
export function png(width: number, height: number, seed = 0, text: Readonly<Record<string, string>> = {}): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: RGB
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) {
    row[1 + x * 3] = (seed * 53 + x * 7) & 0xff;
    row[2 + x * 3] = (seed * 97) & 0xff;
    row[3 + x * 3] = (seed * 31 + 128) & 0xff;
  }
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    ...Object.entries(text).map(([keyword, value]) => pngTextChunk(keyword, value)),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A valid baseline JPEG (a small picture of the Python logo, from CPython's test data). */
export const JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQEAAQABAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/2wBDAQMDAwQDBAgEBAgQCwkLEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBD/wAARCAAQABADASIAAhEBAxEB/8QAFgABAQEAAAAAAAAAAAAAAAAABwQF/8QAJBAAAQQBBAICAwAAAAAAAAAAAQIDBAYFBwgSExEiABQJMTL/xAAVAQEBAAAAAAAAAAAAAAAAAAAABv/EACMRAAECBQMFAAAAAAAAAAAAAAECEQMEBQYhABIxFRZhgeH/2gAMAwEAAhEDEQA/ABSm0mobc8HmExLUlRzzEWPkJWW+ulrsaUVAseUgslSlH9LKuPryIKuWPZdskzXmm3fX5m2nF4GlVxx/HOpx4ks51+MiU/Iaad7UcUo4tILoS4kqcWkezS0hO/HvuRp0rO6hWnWO1UisZVuFi4GFeyEpmGepa5S5SWVPuciFKRFLgSrwetnyPIB+Vb4N9mKhQMzo5po9XLdDs9d6ZVix2VEhiL9kuNPxw2gEKcDQ/rs8AuA8VAe0vdl7VOYn+27flGAUgmITjbhSmCg3BYlyeWDkMolvw4KOp1KM6iCNvngZHwetf//Z',
  'base64',
);

/** `samples` mono 16-bit little-endian PCM samples of a quiet tone (a WAV file's data, headerless). */
export function pcm(samples: number, sampleRate: number): Buffer {
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / sampleRate) * 3000), i * 2);
  return data;
}

/** Samples in one MPEG-2 Layer III frame. */
export const MP3_FRAME_SAMPLES = 576;

/**
 * `frames` frames of silence in MPEG-2 Layer III, 24 kHz mono at 32 kbit/s (24 ms each): a 4-byte
 * header (sync, MPEG-2, layer III, no CRC; bit rate index 4, sample rate index 1; mono) and a body
 * of zeros, which decoders play as silence.
 */
export function mp3Silence(frames: number): Buffer {
  const frame = Buffer.alloc((72 * 32_000) / 24_000);
  frame.set([0xff, 0xf3, 0x44, 0xc0]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

/** A mono 16-bit PCM WAV of `seconds` seconds of a quiet tone. */
export function wav(seconds: number, sampleRate = 8000): Buffer {
  const data = pcm(Math.max(1, Math.round(seconds * sampleRate)), sampleRate);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const size = Buffer.alloc(4);
  size.writeUInt32BE(8 + body.length);
  return Buffer.concat([size, Buffer.from(type, 'ascii'), body]);
}

/** An ISO base media (MP4) file: ftyp, a moov with its movie header for `seconds`, and an mdat. */
export function mp4(seconds: number, seed = 0): Buffer {
  const ftyp = box('ftyp', Buffer.from('isom', 'ascii'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2mp41', 'ascii'));
  const mvhd = Buffer.alloc(100);
  mvhd.writeUInt32BE(1000, 12); // timescale
  mvhd.writeUInt32BE(Math.round(seconds * 1000), 16); // duration
  mvhd.writeUInt32BE(0x00010000, 20); // rate 1.0
  mvhd.writeUInt16BE(0x0100, 24); // volume 1.0
  for (const [offset, value] of [
    [36, 0x00010000],
    [52, 0x00010000],
    [68, 0x40000000],
  ] as const) {
    mvhd.writeUInt32BE(value, offset); // identity matrix
  }
  mvhd.writeUInt32BE(2, 96); // next track id
  const payload = Buffer.alloc(256, seed & 0xff);
  return Buffer.concat([ftyp, box('moov', box('mvhd', mvhd)), box('mdat', payload)]);
}
