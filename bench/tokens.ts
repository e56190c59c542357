import { PromptTokenMemo } from '../src/billing/prompt-token-memo';
import { countMessageTokens, countTokens, type TokenizerEncoding, type TokenMessage } from '../src/billing/tokens';
import { measure, measureOnce, type Measurement, type Table } from './support';

/**
 * The cost of the gateway's own token count on a typical chat prompt: the simple count (what the
 * gateway used for every model before the catalog named tokenizers, and still uses for models
 * that name none) against the two BPE encodings of gpt-tokenizer. Every chat request counts its
 * prompt once (the reservation's estimate), so ops/s here is requests/s that counting alone allows.
 * Then a long conversation, sent again whole with each turn as chat clients do, counted turn by
 * turn with and without the chat feature's memory of the texts counted before (PromptTokenMemo).
 */

const CODE = `export async function retry<T>(fn: () => Promise<T>, attempts = 3): Promise<T> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await fn();
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 2 ** i * 100));
    }
  }
  throw last;
}`;

/** About 1,000 characters: a system prompt, a question with code, an earlier answer, and a follow-up. */
export const TYPICAL_PROMPT: readonly TokenMessage[] = [
  { role: 'system', content: 'You are a careful senior engineer. Answer concisely, show code when it helps, and say when you are unsure.' },
  { role: 'user', content: `Why does this helper sometimes retry a request that already succeeded on the server? We call it around POST requests to a payment API.\n\n${CODE}` },
  {
    role: 'assistant',
    content:
      'The helper retries on any error, including a timeout that fired after the server had processed the request. For non-idempotent POSTs, send an idempotency key so the server can recognise the retry, and retry only on errors that prove the request was not processed (connection refused, 429, 503 with Retry-After).',
  },
  { role: 'user', content: 'Show me the version with an idempotency key, and explain how the backoff should change when the server answers 429 with a Retry-After header in seconds.' },
];

const WARMUP_MS = 300;
const DURATION_MS = 2_000;

async function counting(name: string, encoding: TokenizerEncoding | undefined): Promise<Measurement> {
  return measure(name, async () => countMessageTokens(TYPICAL_PROMPT, encoding), { durationMs: DURATION_MS, warmupMs: WARMUP_MS });
}

/**
 * Words with numbers drawn by a fixed linear congruential sequence (31 bits, in 32-bit integer
 * arithmetic: a product in floating point would lose its low bits), so that no sentence repeats:
 * the encodings cache the pieces they saw, and a repeated text would be counted from that cache.
 */
function conversation(turns: number, wordsPerMessage: number): TokenMessage[] {
  const words = ['ledger', 'invoice', 'quarterly', 'revenue', 'the', 'of', 'margin', 'supplier', 'risk', 'contract', 'penalty', 'clause', 'review', 'growth', 'segment', 'cost'];
  let seed = 42;
  // The high bits: the low bits of such a sequence repeat with short periods.
  const next = (): number => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) & 0x7fffffff) >>> 16;
  return Array.from({ length: turns }, (_, turn) => ({
    role: turn % 2 === 0 ? 'user' : 'assistant',
    content: Array.from({ length: wordsPerMessage }, () => `${words[next() % words.length]}${next() % 1000}`).join(' '),
  }));
}

/** Every turn of `messages` counted as its request would be: the conversation so far, sent again whole. */
function countTurns(messages: readonly TokenMessage[], count: (sofar: readonly TokenMessage[]) => number): number {
  let total = 0;
  for (let turn = 1; turn <= messages.length; turn++) total += count(messages.slice(0, turn));
  return total;
}

async function conversationTable(): Promise<Table> {
  const messages = conversation(40, 400);
  const chars = messages.reduce((n, m) => n + m.content.length, 0);
  const options = { durationMs: DURATION_MS, warmupMs: WARMUP_MS };
  return {
    title: `Counting a conversation turn by turn (${messages.length} turns, ${chars} characters in all; each request sends every earlier message again)`,
    baseline: 'o200k_base, every text counted',
    unit: 'conversations/s',
    rows: [
      await measure('o200k_base, every text counted', async () => countTurns(messages, (sofar) => countMessageTokens(sofar, 'o200k_base')), options),
      // A new memo for each conversation: its first counts are in the figure.
      await measure('o200k_base, texts counted before remembered (PromptTokenMemo)', async () => {
        const count = new PromptTokenMemo().counter('acct_bench', 'o200k_base');
        return countTurns(messages, (sofar) => countMessageTokens(sofar, count));
      }, options),
    ],
    notes: [`one conversation is ${messages.length} requests; per request, divide its time by ${messages.length}`],
  };
}

export async function benchTokens(report: (table: Table) => void): Promise<void> {
  // First use loads the encoding's merge ranks (lazily, so start-up pays nothing for it).
  const loads = [
    (await measureOnce('load o200k_base (first count)', async () => countTokens('warm up', 'o200k_base'))).measurement,
    (await measureOnce('load cl100k_base (first count)', async () => countTokens('warm up', 'cl100k_base'))).measurement,
  ];
  const text = TYPICAL_PROMPT.map((m) => m.content).join('\n');
  const sizes = (['o200k_base', 'cl100k_base'] as const).map((e) => `${e} ${countMessageTokens(TYPICAL_PROMPT, e)}`).join(', ');
  report({
    title: `Counting the prompt of a chat request (${TYPICAL_PROMPT.length} messages, ${text.length} characters)`,
    baseline: 'simple count (before)',
    unit: 'counts/s',
    rows: [await counting('simple count (before)', undefined), await counting('o200k_base', 'o200k_base'), await counting('cl100k_base', 'cl100k_base'), ...loads],
    notes: [`tokens: simple count ${countMessageTokens(TYPICAL_PROMPT)}, ${sizes}`],
  });
  report(await conversationTable());
}
