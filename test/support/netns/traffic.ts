import { expect } from 'chai';
import OpenAI from 'openai';
import type { GatewayProcess } from '../gateway-process';

/** The client traffic of the multi-host test: what a request on a gateway came to. */
export interface Outcome {
  readonly gateway: string;
  /** The catalog model asked for. */
  readonly model: string;
  readonly ok: boolean;
  readonly error?: string;
}

/** The models the traffic asks for. */
export const CHAT_MODEL = 'chat-fast';
export const IMAGE_MODEL = 'image-5.0';

/**
 * Chat (plain and streamed) and sync images on each gateway at once; image links are added to
 * `files`. A gateway's requests carry its abort signal, if any.
 */
export function traffic(targets: readonly GatewayProcess[], key: string, files: string[], signals: Record<string, AbortSignal> = {}): { done: Promise<Outcome[]>; completed: () => number } {
  let completed = 0;
  const outcomes: Outcome[] = [];
  const work = targets.flatMap((gateway) => {
    const signal = signals[gateway.name];
    const chats = Array.from({ length: 8 }, (_, i) => ({ model: CHAT_MODEL, done: chat(gateway, key, `hello ${i} [sim:tokens=20] [sim:delay=${50 * (i % 4)}]`, i % 2 === 1, signal) }));
    const images = [1, 2].map(() => ({ model: IMAGE_MODEL, done: image(gateway, key, files, signal) }));
    return [...chats, ...images].map(({ model, done }) =>
      done.then(
        () => outcomes.push({ gateway: gateway.name, model, ok: true }),
        (err: unknown) => outcomes.push({ gateway: gateway.name, model, ok: false, error: String(err) }),
      ).finally(() => completed++),
    );
  });
  return { done: Promise.all(work).then(() => outcomes), completed: () => completed };
}

/** One sync image generation; its link is added to `files`. */
async function image(gateway: GatewayProcess, key: string, files: string[], signal: AbortSignal | undefined): Promise<void> {
  const res = await fetch(`${gateway.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: IMAGE_MODEL, prompt: 'a lighthouse' }),
    signal,
  });
  const body: any = await res.json();
  expect(res.status, JSON.stringify(body)).to.equal(200);
  expect(body.data).to.have.length(1);
  files.push(body.data[0].url);
}

/** One chat completion through the official client, streamed or not; rejects unless it is answered whole. */
export async function chat(gateway: GatewayProcess, key: string, content: string, stream: boolean, signal?: AbortSignal, model = CHAT_MODEL): Promise<void> {
  const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  const messages = [{ role: 'user' as const, content }];
  if (!stream) {
    const answer = await client.chat.completions.create({ model, messages, max_tokens: 64 }, { signal });
    expect(answer.choices[0]?.message.content).to.not.equal('');
    return;
  }
  const answer = await client.chat.completions.create({ model, messages, max_tokens: 64, stream: true }, { signal });
  let text = '';
  for await (const chunk of answer) text += chunk.choices[0]?.delta?.content ?? '';
  expect(text).to.not.equal('');
}
