import { createParser, type ParseError } from 'eventsource-parser';

/** One server-sent event: its `event:` name (if any) and its `data:` lines joined by newlines. */
export interface SseEvent {
  readonly event: string | null;
  readonly data: string;
}

/**
 * An upstream sending one line without end is broken, not slow: past this many characters of an
 * unfinished line or event the stream fails rather than fill the gateway's memory.
 */
const MAX_BUFFERED_CHARS = 16 * 1024 * 1024;

/**
 * Parses a text/event-stream body incrementally with eventsource-parser (the WHATWG framing:
 * LF, CRLF and CR line ends, a leading BOM, comments, `retry:`/`id:` and unknown fields, multi-line
 * `data:`), decoding UTF-8 across chunk boundaries. An event is dispatched at its blank line; one
 * left unfinished when the body ends is dropped, as the standard says.
 */
export async function* parseSse(body: AsyncIterable<Buffer | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const ready: SseEvent[] = [];
  let failure: ParseError | null = null;
  const parser = createParser({
    onEvent: (e) => ready.push({ event: e.event ?? null, data: e.data }),
    // Unknown fields and a malformed retry are ignored, as a browser would; only an overrun fails.
    onError: (err) => {
      if (err.type === 'max-buffer-size-exceeded') failure = err;
    },
    maxBufferSize: MAX_BUFFERED_CHARS,
  });
  let started = false;
  let endsWithCr = false;
  const feed = function* (text: string): Generator<SseEvent> {
    // TextDecoder drops a byte order mark; a body of strings may still carry one.
    if (!started && text !== '') {
      started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (text !== '') {
      parser.feed(text);
      endsWithCr = text.endsWith('\r');
    }
    if (failure) throw new Error(`the event stream has an unfinished line or event over ${MAX_BUFFERED_CHARS} characters`);
    for (const event of ready) yield event;
    ready.length = 0;
  };
  for await (const chunk of body) yield* feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
  yield* feed(decoder.decode());
  // The parser holds back a final CR in case an LF follows; at the end it was a line end anyway.
  if (endsWithCr) yield* feed('\n');
}
