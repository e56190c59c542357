/** One server-sent event: its `event:` name (if any) and its `data:` lines joined by newlines. */
export interface SseEvent {
  readonly event: string | null;
  readonly data: string;
}

/**
 * Parses a text/event-stream body incrementally, without buffering more than one event. Comment
 * lines (`: ping`) and fields other than event/data are skipped.
 */
export async function* parseSse(body: AsyncIterable<Buffer | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | null = null;
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (data.length > 0) yield { event, data: data.join('\n') };
        event = null;
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line[5] === ' ' ? 6 : 5));
      } else if (line.startsWith('event:')) {
        event = line.slice(line[6] === ' ' ? 7 : 6);
      }
    }
  }
  if (data.length > 0) yield { event, data: data.join('\n') };
}
