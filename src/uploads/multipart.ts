/**
 * A streaming multipart/form-data reader (RFC 7578): parts come out one at a time, each with
 * its headers and its body as an async iterable of chunks, read from the request as the consumer
 * pulls. Nothing is buffered beyond one network chunk plus the length of the boundary, so a
 * 1 GB upload streams straight into the file store.
 *
 * Each part's body must be consumed (or abandoned by asking for the next part, which drains it)
 * before the next part is read.
 */
export class MultipartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MultipartError';
  }
}

export interface MultipartPart {
  /** The form field name from Content-Disposition. */
  readonly name: string;
  /** The file name when the part is a file (Content-Disposition filename / filename*). */
  readonly filename: string | null;
  readonly contentType: string | null;
  readonly body: AsyncIterable<Buffer>;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEADER_BYTES = 16 * 1024;
const MAX_PREAMBLE_BYTES = 64 * 1024;

/** The boundary of a `multipart/form-data; boundary=…` Content-Type, or null. */
export function boundaryOf(contentType: string | undefined): string | null {
  if (!contentType || !/^multipart\/form-data\s*(;|$)/i.test(contentType)) return null;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return match ? (match[1] ?? match[2]!) : null;
}

class Reader {
  private buffer: Buffer = Buffer.alloc(0);
  private ended = false;

  constructor(private readonly source: AsyncIterator<Buffer | string>) {}

  get buffered(): Buffer {
    return this.buffer;
  }

  consume(bytes: number): void {
    this.buffer = this.buffer.subarray(bytes);
  }

  /** Reads one more chunk into the buffer; false at the end of the input. */
  async fill(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.source.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    return true;
  }

  /** Ensures at least `n` bytes are buffered; false if the input ends first. */
  async need(n: number): Promise<boolean> {
    while (this.buffer.length < n) if (!(await this.fill())) return false;
    return true;
  }
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MultipartError('malformed part header');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

/** A parameter of Content-Disposition: quoted, bare, or RFC 5987 extended (`filename*=UTF-8''…`). */
function dispositionParam(disposition: string, name: string): string | null {
  const extended = new RegExp(`;\\s*${name}\\*\\s*=\\s*([^']*)'[^']*'([^;]*)`, 'i').exec(disposition);
  if (extended) {
    try {
      return decodeURIComponent(extended[2]!.trim());
    } catch {
      // fall through to the plain parameter
    }
  }
  const quoted = new RegExp(`;\\s*${name}\\s*=\\s*"((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(disposition);
  if (quoted) return quoted[1]!.replace(/\\(.)/g, '$1');
  const bare = new RegExp(`;\\s*${name}\\s*=\\s*([^;\\s]+)`, 'i').exec(disposition);
  return bare ? bare[1]! : null;
}

/** The parts of a multipart body, in order. Throws MultipartError on a malformed body. */
export async function* readMultipart(source: AsyncIterable<Buffer | string>, boundary: string): AsyncGenerator<MultipartPart> {
  const reader = new Reader(source[Symbol.asyncIterator]());
  const dashBoundary = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.from(`\r\n--${boundary}`);

  // The preamble (usually empty) ends at the first dash-boundary.
  for (;;) {
    const at = reader.buffered.indexOf(dashBoundary);
    if (at >= 0) {
      reader.consume(at + dashBoundary.length);
      break;
    }
    if (reader.buffered.length > MAX_PREAMBLE_BYTES) throw new MultipartError('no multipart boundary found');
    if (!(await reader.fill())) throw new MultipartError('no multipart boundary found');
  }

  for (;;) {
    // After a boundary: `--` closes the body, CRLF starts a part (transport padding is allowed).
    if (!(await reader.need(2))) throw new MultipartError('unexpected end of multipart body');
    if (reader.buffered[0] === 0x2d && reader.buffered[1] === 0x2d) return;
    let eol = reader.buffered.indexOf(CRLF);
    while (eol < 0) {
      if (reader.buffered.length > 1024 || !(await reader.fill())) throw new MultipartError('malformed multipart boundary line');
      eol = reader.buffered.indexOf(CRLF);
    }
    if (reader.buffered.subarray(0, eol).toString('latin1').trim() !== '') throw new MultipartError('malformed multipart boundary line');
    reader.consume(eol + 2);

    if (!(await reader.need(2))) throw new MultipartError('unexpected end of multipart body');
    let headerEnd = reader.buffered.indexOf(HEADER_END);
    // A part without headers starts with an empty line right away.
    const noHeaders = reader.buffered[0] === 0x0d && reader.buffered[1] === 0x0a;
    while (!noHeaders && headerEnd < 0) {
      if (reader.buffered.length > MAX_HEADER_BYTES) throw new MultipartError('part headers are too large');
      if (!(await reader.fill())) throw new MultipartError('unexpected end of multipart body');
      headerEnd = reader.buffered.indexOf(HEADER_END);
    }
    const headers = noHeaders ? new Map<string, string>() : parseHeaders(reader.buffered.subarray(0, headerEnd).toString('utf8'));
    reader.consume(noHeaders ? 2 : headerEnd + HEADER_END.length);

    const disposition = headers.get('content-disposition') ?? '';
    if (!/^form-data\b/i.test(disposition)) throw new MultipartError('every part needs Content-Disposition: form-data');
    const name = dispositionParam(disposition, 'name');
    if (name === null) throw new MultipartError('a part has no field name');

    let finished = false;
    const body = async function* (): AsyncGenerator<Buffer> {
      for (;;) {
        const at = reader.buffered.indexOf(delimiter);
        if (at >= 0) {
          const data = reader.buffered.subarray(0, at);
          reader.consume(at + delimiter.length);
          finished = true;
          if (data.length > 0) yield data;
          return;
        }
        // Everything but a possible start of the delimiter can go out now.
        const safe = reader.buffered.length - (delimiter.length - 1);
        if (safe > 0) {
          const data = reader.buffered.subarray(0, safe);
          reader.consume(safe);
          yield data;
        }
        if (!(await reader.fill())) throw new MultipartError('unexpected end of multipart body');
      }
    };
    const iterator = body();
    yield { name, filename: dispositionParam(disposition, 'filename'), contentType: headers.get('content-type') ?? null, body: { [Symbol.asyncIterator]: () => iterator } };
    // The consumer moved on: drain whatever it left of this part (a fresh scan continues where
    // an abandoned one stopped, since only what was handed out has been consumed).
    if (!finished) for await (const _chunk of body()) void _chunk;
  }
}
