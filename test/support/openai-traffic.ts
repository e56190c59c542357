/**
 * What an OpenAI client library sent to the gateway and what it got back, as the bytes crossed the
 * wire: the libraries parse answers leniently and hide stream items, so conformance is checked on
 * the recorded traffic, not on what a library returns.
 */
import { Readable } from 'node:stream';
import { parseSse } from '../../src/upstreams/sse';
import { assertOpenAiSchema, assertResponseStreamEventAsTheApiSendsIt } from './openai-schema';

export interface Exchange {
  readonly method: string;
  /** The path below the gateway's address, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** The request's JSON body, parsed; null when it had none. */
  readonly request: any;
  readonly status: number;
  readonly requestId: string | null;
  /** `data:` items of an event stream in order, each parsed (`[DONE]` kept as the string); null for an answer not streamed. */
  readonly streamed: readonly any[] | null;
  /** A JSON answer, parsed; null for a stream. */
  readonly answer: any;
}

/** A `fetch` to hand to a client library, recording every exchange it makes. */
export class TrafficRecorder {
  private readonly pending: Promise<Exchange>[] = [];

  readonly fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const requestText = init?.body === undefined || init.body === null ? await request.clone().text() : init.body;
    if (typeof requestText !== 'string') throw new Error(`the recorder reads JSON bodies only, not ${Object.prototype.toString.call(requestText)}`);
    const response = await globalThis.fetch(request);
    // The clone is read whole beside the library, which may stop reading the original early.
    this.pending.push(recorded(request, requestText, response.clone()));
    return response;
  };

  /** Every exchange made so far, once each answer has been read to its end. */
  async exchanges(): Promise<Exchange[]> {
    return Promise.all(this.pending);
  }
}

async function recorded(request: Request, requestText: string, response: Response): Promise<Exchange> {
  const text = await response.text();
  const streamed = response.headers.get('content-type')?.startsWith('text/event-stream') ? await sseData(text) : null;
  return {
    method: request.method,
    path: new URL(request.url).pathname,
    request: requestText === '' ? null : JSON.parse(requestText),
    status: response.status,
    requestId: response.headers.get('x-request-id'),
    streamed,
    answer: streamed === null && text !== '' ? JSON.parse(text) : null,
  };
}

async function sseData(text: string): Promise<any[]> {
  const items: any[] = [];
  for await (const event of parseSse(Readable.from([text]))) items.push(event.data === '[DONE]' ? event.data : JSON.parse(event.data));
  return items;
}

/**
 * Throws unless every answer and stream item of `exchange` is valid by OpenAI's official document:
 * an error as ErrorResponse (also the `{"error": …}` item that ends a failed chat stream, as the
 * live API sends it), a chat completion or each of its chunks, a Response or each of its stream
 * events, an image answer.
 */
export function assertExchangeValidates(exchange: Exchange): void {
  const what = `${exchange.method} ${exchange.path} (${exchange.status})`;
  if (exchange.status >= 400) return assertOpenAiSchema('ErrorResponse', exchange.answer, what);
  if (exchange.method === 'DELETE' && STORED_RESPONSE.test(exchange.path)) return assertDeletedResponse(exchange.answer, exchange.path, what);
  const schemas = ANSWER_SCHEMAS[exchange.path] ?? STORED_RESPONSE_SCHEMAS.find(([pattern]) => pattern.test(exchange.path))?.[1];
  if (!schemas) throw new Error(`no OpenAI schema is known for the answer of ${what}`);
  if (exchange.streamed === null) return assertOpenAiSchema(schemas.answer, exchange.answer, what);
  if (!schemas.streamed) throw new Error(`${what} is not a streamed endpoint, yet answered a stream`);
  for (const [i, item] of exchange.streamed.entries()) {
    if (item === '[DONE]') continue;
    if ('error' in item) assertOpenAiSchema('ErrorResponse', item, `the error item of ${what}`);
    else schemas.streamed(item, `item ${i} of ${what}`);
  }
}

const ANSWER_SCHEMAS: Record<string, { answer: string; streamed?: (item: any, what: string) => void }> = {
  '/v1/chat/completions': {
    answer: 'CreateChatCompletionResponse',
    streamed: (item, what) => assertOpenAiSchema('CreateChatCompletionStreamResponse', item, what),
  },
  '/v1/responses': { answer: 'Response', streamed: (item) => assertResponseStreamEventAsTheApiSendsIt(item) },
  '/v1/images/generations': { answer: 'ImagesResponse' },
};

const STORED_RESPONSE = /^\/v1\/responses\/[^/]+$/;

/** The stored-response reads, by path pattern: a Response, its input items. */
const STORED_RESPONSE_SCHEMAS: readonly [RegExp, { answer: string }][] = [
  [STORED_RESPONSE, { answer: 'Response' }],
  [/^\/v1\/responses\/[^/]+\/input_items$/, { answer: 'ResponseItemList' }],
];

/**
 * OpenAI's document gives a deleted Response's answer no schema: `{id, object, deleted: true}`
 * (the simulator's `object` is `response.deleted`; not checked against the provider).
 */
function assertDeletedResponse(answer: unknown, path: string, what: string): void {
  const id = decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
  const deleted = answer as { id?: unknown; object?: unknown; deleted?: unknown } | null;
  if (deleted?.id !== id || deleted.deleted !== true || typeof deleted.object !== 'string') throw new Error(`${what}: not a deleted response: ${JSON.stringify(answer)}`);
}
