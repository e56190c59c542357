import { expect } from 'chai';
import { parseSse, type SseEvent } from '../../src/upstreams/sse';

/** The framing cases of text/event-stream (WHATWG HTML, "Parsing an event stream") an upstream may send. */
export const SSE_CASES: readonly { readonly name: string; readonly body: string; readonly events: readonly SseEvent[] }[] = [
  { name: 'LF line ends', body: 'data: a\n\ndata: b\n\n', events: [ev('a'), ev('b')] },
  { name: 'CRLF line ends', body: 'event: delta\r\ndata: a\r\n\r\ndata: b\r\n\r\n', events: [ev('a', 'delta'), ev('b')] },
  { name: 'CR line ends', body: 'event: delta\rdata: a\r\rdata: b\r\r', events: [ev('a', 'delta'), ev('b')] },
  { name: 'mixed line ends', body: 'data: a\r\n\ndata: b\r\rdata: c\n\r\n', events: [ev('a'), ev('b'), ev('c')] },
  { name: 'comments (keep-alive pings)', body: ': ping\n\n:no space\ndata: a\n: inside\n\n', events: [ev('a')] },
  { name: 'retry, id and unknown fields are not data', body: 'retry: 3000\nid: 7\nfoo: bar\nretry: soon\ndata: a\n\n', events: [ev('a')] },
  { name: 'multi-line data joined by LF', body: 'data: {"a":\ndata:  1}\ndata\n\n', events: [ev('{"a":\n 1}\n')] },
  { name: 'no space after the colon', body: 'event:x\ndata:a\n\n', events: [ev('a', 'x')] },
  { name: 'a leading byte order mark', body: '\uFEFFdata: a\n\n', events: [ev('a')] },
  { name: 'multibyte UTF-8', body: 'data: 会议纪要 – ok 🎉\n\n', events: [ev('会议纪要 – ok 🎉')] },
  { name: 'an event name resets after each event', body: 'event: x\ndata: a\n\ndata: b\n\n', events: [ev('a', 'x'), ev('b')] },
  { name: 'an event without data is not dispatched', body: 'event: x\n\ndata: a\n\n', events: [ev('a')] },
  { name: 'an unfinished last event is dropped', body: 'data: a\n\ndata: b\n', events: [ev('a')] },
  { name: 'an OpenAI stream', body: 'data: {"x":1}\n\ndata: [DONE]\n\n', events: [ev('{"x":1}'), ev('[DONE]')] },
];

function ev(data: string, event: string | null = null): SseEvent {
  return { event, data };
}

async function* pieces(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function parse(source: AsyncIterable<Buffer | string>): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of parseSse(source)) events.push(event);
  return events;
}

describe('upstream text/event-stream parsing (eventsource-parser)', () => {
  for (const c of SSE_CASES) {
    it(`${c.name}, whatever the chunking (lines and UTF-8 characters split across chunks)`, async () => {
      const bytes = Buffer.from(c.body, 'utf8');
      // Chunks of one byte split every CRLF and every multibyte character.
      for (const size of [1, 2, 3, 5, bytes.length]) expect(await parse(pieces(bytes, size)), `chunks of ${size} bytes`).to.deep.equal(c.events);
      expect(await parse((async function* () { yield c.body; })()), 'one string').to.deep.equal(c.events);
    });
  }

  it('fails a stream whose unfinished line outgrows the buffer instead of holding it', async () => {
    const endless = (async function* () {
      const block = Buffer.alloc(1024 * 1024, 'x');
      yield Buffer.from('data: ');
      for (let i = 0; i < 20; i++) yield block;
    })();
    let error: unknown = null;
    try {
      await parse(endless);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(Error);
    expect((error as Error).message).to.match(/unfinished line or event/);
  });
});
