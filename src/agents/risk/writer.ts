import type { ModelEntry } from '../../billing/catalog';
import { tokenCharge, tokenLine, type PricedLine } from '../../billing/money';
import { countMessageTokens, countTokens, splitTokens, type TokenMessage } from '../../billing/tokens';
import { chatCapabilities, chatPricing } from '../../chat/model-type';
import { isAbort } from '../../http/upstream-errors';
import type { Logger } from '../../log';
import { UpstreamError } from '../../upstreams/errors';
import { chatCompletion, chatCompletionStream } from '../../upstreams/openai/relay';
import type { Company } from './identity';
import type { DimensionItem } from './screening';
import { routeOptions, type Router } from '../../upstreams/routing/router';

/** What the report writer uses. */
export interface WriterDeps {
  /** Picks the writer model's channel, failing over before its first byte (src/upstreams/routing). */
  readonly router: Pick<Router, 'attempt'>;
}

/**
 * The report writer: a chat model that turns the screening findings into a short summary. Its
 * prompt is cut to a fixed token budget, so the reservation made before any search (budget plus
 * the answer's maximum) is an upper bound of what it can cost.
 */
export const WRITER_PROMPT_TOKEN_BUDGET = 3000;
export const WRITER_MAX_TOKENS = 800;

export interface WriterUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

export interface WriterOutcome {
  /** What the writer delivered (all of it, or what came before a failure). */
  readonly text: string;
  readonly usage: WriterUsage;
  /** Why the writer failed, or null. */
  readonly failure: string | null;
}

export const NO_WRITER_USAGE: WriterUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

const INSTRUCTIONS = [
  'You summarise public web-search leads about one company for a due-diligence reader.',
  'Every lead is an unverified search result: never state that a lawsuit, debt, penalty or enforcement exists, only that pages suggest it.',
  'Give no rating and no score. Mention dimensions that could not be searched.',
  'Missing evidence does not establish no risk; historical records do not establish current status; every lead needs verification.',
  'Answer in 3 to 6 sentences, in the language of the company name.',
].join(' ');

export function writerMaxTokens(writer: ModelEntry): number {
  return Math.min(WRITER_MAX_TOKENS, chatCapabilities(writer).max_output_tokens);
}

/** The most the writer can cost: the prompt budget and the maximum answer, by its token prices. */
export function writerEstimate(writer: ModelEntry): number {
  return tokenCharge(chatPricing(writer), WRITER_PROMPT_TOKEN_BUDGET, writerMaxTokens(writer));
}

export function writerLine(writer: ModelEntry, usage: WriterUsage): PricedLine {
  return tokenLine(chatPricing(writer), usage.prompt_tokens, usage.completion_tokens);
}

export interface WriterInput {
  readonly company: Company;
  readonly screenedName: string;
  readonly dimensions: readonly DimensionItem[];
  readonly warnings: readonly string[];
}

/**
 * The writer's messages, within WRITER_PROMPT_TOKEN_BUDGET: leads are dropped from the end of
 * each dimension until it fits, and as a last resort the findings text is cut.
 */
export function writerMessages(input: WriterInput): TokenMessage[] {
  const build = (leadsPerDimension: number): TokenMessage[] => [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: findingsText(input, leadsPerDimension) },
  ];
  for (let leads = 5; leads >= 0; leads--) {
    const messages = build(leads);
    if (countMessageTokens(messages) <= WRITER_PROMPT_TOKEN_BUDGET) return messages;
  }
  const messages = build(0);
  // What is left once the system message and the user message's own overhead are counted.
  const room = WRITER_PROMPT_TOKEN_BUDGET - countMessageTokens([messages[0]!]) - countMessageTokens([{ role: 'user', content: '' }]);
  const cut = splitTokens(findingsText(input, 0)).slice(0, Math.max(0, room)).join('');
  return [messages[0]!, { role: 'user', content: cut }];
}

function findingsText(input: WriterInput, leadsPerDimension: number): string {
  const { company } = input;
  const lines = [
    `Company: ${input.screenedName} (identity: ${company.identity_status}${company.credit_code ? `, credit code ${company.credit_code}` : ''})`,
    'Findings by dimension (all leads unverified):',
  ];
  for (const d of input.dimensions) {
    lines.push(`- ${d.label} (${d.data_type}): ${d.status}, ${d.evidence_count} lead(s)`);
    for (const s of d.samples.slice(0, leadsPerDimension)) {
      lines.push(`  * ${s.date || 'undated'} [${s.source_type}] ${s.title}: ${s.excerpt}`);
    }
  }
  if (input.warnings.length > 0) lines.push('Warnings:', ...input.warnings.slice(0, 10).map((w) => `- ${w}`));
  return lines.join('\n');
}

interface Completion {
  choices?: { message?: { content?: string | null } }[];
  usage?: WriterUsage;
}

interface Chunk {
  choices?: { delta?: { content?: string | null } }[];
  usage?: WriterUsage | null;
}

/**
 * Calls the writer, plain or streamed, handing its text to `onText` as it comes. Never throws for
 * an upstream failure: the outcome says what was delivered and why it stopped, so the report can
 * still be written and the completed searches billed. A refused call costs nothing; a stream that
 * broke off is charged for the prompt and what it delivered, like a chat stream.
 */
export async function runWriter(
  deps: WriterDeps,
  writer: ModelEntry,
  messages: readonly TokenMessage[],
  /** `servedBy`: told the channel that served the writer, once one did. */
  options: { stream: boolean; onText: (piece: string) => Promise<void>; signal?: AbortSignal; logger: Logger; servedBy: (channel: string) => void },
): Promise<WriterOutcome> {
  const promptTokens = countMessageTokens(messages, writer.tokenizer);
  const body = { model: chatCapabilities(writer).upstream_model ?? writer.id, messages, max_tokens: writerMaxTokens(writer) };
  let delivered = '';
  let opened = false;
  try {
    if (!options.stream) {
      const { value: completion, channel } = await deps.router.attempt(writer, (ch) => chatCompletion<Completion>(ch, { ...body, stream: false }, options.signal), routeOptions(options.signal));
      options.servedBy(channel);
      opened = true;
      delivered = completion.choices?.[0]?.message?.content ?? '';
      await options.onText(delivered);
      return { text: delivered, usage: completion.usage ?? counted(writer, promptTokens, delivered), failure: null };
    }
    const streamed = { ...body, stream: true, stream_options: { include_usage: true } };
    const { value: events, channel } = await deps.router.attempt(writer, (ch) => chatCompletionStream(ch, streamed, options.signal), routeOptions(options.signal));
    options.servedBy(channel);
    opened = true;
    let usage: WriterUsage | null = null;
    let done = false;
    for await (const event of events) {
      if (event.data === '[DONE]') {
        done = true;
        break;
      }
      const chunk = JSON.parse(event.data) as Chunk;
      if (chunk.usage) usage = chunk.usage;
      const piece = (chunk.choices ?? []).map((c) => c.delta?.content ?? '').join('');
      if (piece !== '') {
        delivered += piece;
        await options.onText(piece);
      }
    }
    if (!done) throw new UpstreamError(502, 'the writer stream ended early', 'upstream_incomplete', 'protocol');
    return { text: delivered, usage: usage ?? counted(writer, promptTokens, delivered), failure: null };
  } catch (err) {
    const failure = isAbort(err) ? 'the client went away' : err instanceof UpstreamError ? `upstream: ${err.message}` : 'the writer answered in a form the gateway could not read';
    options.logger.warn({ err, writer: writer.id }, 'risk report writer failed');
    return { text: delivered, usage: opened ? counted(writer, promptTokens, delivered) : NO_WRITER_USAGE, failure };
  }
}

function counted(writer: ModelEntry, promptTokens: number, delivered: string): WriterUsage {
  const completion = countTokens(delivered, writer.tokenizer);
  return { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
}
