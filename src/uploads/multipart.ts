import type { Readable } from 'node:stream';
import busboy from 'busboy';

/**
 * multipart/form-data (RFC 7578) read with busboy, handed out as a pull-based sequence of parts:
 * each part's body is an async iterable read from the request as the consumer pulls. busboy
 * holds back the request while a file part's stream is not read, so nothing is buffered beyond
 * a network chunk and one stream buffer, and a 1 GB upload streams straight into the file store.
 *
 * A part whose body the consumer leaves unread is drained when it asks for the next part.
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
  /** The file name when the part is a file (Content-Disposition filename / filename*), without any path. */
  readonly filename: string | null;
  /** The media type of a file part (RFC 7578's default text/plain when it names none); null for a field. */
  readonly contentType: string | null;
  readonly body: AsyncIterable<Buffer>;
}

/** A field (a part without a file name) is held whole in memory: it carries a short value, never a file. */
const MAX_FIELD_BYTES = 64 * 1024;
/** An upload carries a handful of parts; more is not a form this gateway reads. */
const MAX_PARTS = 64;

/** The boundary of a `multipart/form-data; boundary=…` Content-Type, or null. */
export function boundaryOf(contentType: string | undefined): string | null {
  if (!contentType || !/^multipart\/form-data\s*(;|$)/i.test(contentType)) return null;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return match ? (match[1] ?? match[2]!) : null;
}

/** busboy's errors, in the words the upload route reports after "malformed multipart body: ". */
function multipartErrorOf(err: Error): MultipartError {
  if (/^unexpected end/i.test(err.message)) return new MultipartError('unexpected end of multipart body');
  return new MultipartError(err.message.charAt(0).toLowerCase() + err.message.slice(1));
}

type Item = { readonly part: MultipartPart; readonly drain: () => void } | { readonly error: Error } | { readonly end: true };

/** A first-in first-out hand-over from busboy's events to the consumer's pulls. */
class Queue {
  private readonly items: Item[] = [];
  private waiting: ((item: Item) => void) | null = null;

  push(item: Item): void {
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting) waiting(item);
    else this.items.push(item);
  }

  next(): Promise<Item> {
    const item = this.items.shift();
    return item ? Promise.resolve(item) : new Promise((resolve) => (this.waiting = resolve));
  }
}

function parserFor(boundary: string): busboy.Busboy {
  try {
    return busboy({
      headers: { 'content-type': `multipart/form-data; boundary="${boundary.replace(/[\\"]/g, '\\$&')}"` },
      // Plain (not RFC 5987) parameters are UTF-8, as browsers and undici's FormData send file names.
      defParamCharset: 'utf8',
      limits: { fieldSize: MAX_FIELD_BYTES, parts: MAX_PARTS },
    });
  } catch (err) {
    // A boundary busboy cannot take (characters a quoted string may not hold) is a client's error.
    throw new MultipartError(`unusable boundary: ${(err as Error).message}`);
  }
}

/** The parts of a multipart body, in order. Throws MultipartError on a malformed body; an error of `source` comes out as it is. */
export async function* readMultipart(source: AsyncIterable<Buffer | string>, boundary: string): AsyncGenerator<MultipartPart> {
  const parser = parserFor(boundary);
  const queue = new Queue();
  let failure: Error | null = null;
  let parts = 0;
  /** The first failure ends the body: it comes out of next() and out of a file body being read. */
  const fail = (error: Error) => {
    if (failure) return;
    failure = error;
    queue.push({ error });
    parser.destroy(error);
  };
  const named = (name: string | undefined): name is string => {
    if (name) return true;
    fail(new MultipartError('a part has no field name'));
    return false;
  };

  parser.on('file', (name: string | undefined, stream: Readable, info: busboy.FileInfo) => {
    // Its failures come out of the body's iteration (or of next()), whether or not it is being read.
    stream.on('error', () => {});
    if (!named(name)) return void stream.resume();
    parts += 1;
    let read = false;
    const body = async function* (): AsyncGenerator<Buffer> {
      read = true;
      try {
        for await (const chunk of stream) yield chunk as Buffer;
      } catch (err) {
        throw failure ?? multipartErrorOf(err as Error);
      }
    };
    queue.push({
      part: { name, filename: info.filename ?? null, contentType: info.mimeType, body: { [Symbol.asyncIterator]: body } },
      drain: () => void (read || stream.resume()),
    });
  });
  parser.on('field', (name: string | undefined, value: string, info: busboy.FieldInfo) => {
    if (!named(name)) return;
    if (info.valueTruncated) return fail(new MultipartError(`field ${name} is larger than ${MAX_FIELD_BYTES} bytes`));
    parts += 1;
    const data = Buffer.from(value, 'utf8');
    queue.push({ part: { name, filename: null, contentType: null, body: (async function* () { if (data.length > 0) yield data; })() }, drain: () => {} });
  });
  parser.on('partsLimit', () => fail(new MultipartError(`a form has at most ${MAX_PARTS} parts`)));
  parser.on('error', (err: Error) => fail(err === failure ? err : multipartErrorOf(err)));
  // busboy skips parts that are not `Content-Disposition: form-data`; a body of only those is no form.
  parser.on('finish', () => queue.push(parts > 0 ? { end: true } : { error: new MultipartError('the body has no form-data parts') }));

  void pump(source[Symbol.asyncIterator](), parser, (err) => fail(err as Error));

  try {
    for (;;) {
      const item = await queue.next();
      if ('error' in item) throw item.error;
      if ('end' in item) return;
      yield item.part;
      item.drain();
    }
  } finally {
    // The consumer stopped early or the body failed: stop parsing (the request itself is left to
    // the route, which still has to answer on its connection).
    if (!parser.writableFinished) parser.destroy();
  }
}

/**
 * Writes the request into busboy, waiting whenever busboy holds back (a file part not yet read).
 * Pulls through the iterator by hand: returning it would destroy the request and with it the
 * connection the route still answers on.
 */
async function pump(chunks: AsyncIterator<Buffer | string>, parser: busboy.Busboy, onSourceError: (err: unknown) => void): Promise<void> {
  try {
    for (;;) {
      const next = await chunks.next();
      if (parser.destroyed) return;
      if (next.done) return void parser.end();
      if (!parser.write(next.value)) await new Promise<void>((resolve) => {
        const done = () => {
          parser.off('drain', done).off('close', done);
          resolve();
        };
        parser.on('drain', done).on('close', done);
      });
      if (parser.destroyed) return;
    }
  } catch (err) {
    if (!parser.destroyed) onSourceError(err);
  }
}
