import type { ModelEntry } from '../billing/catalog';
import { tokenCharge } from '../billing/money';
import { countMessageTokens, countTokens, type TokenizerEncoding, type TokenMessage } from '../billing/tokens';
import { chatCapabilities, chatPricing } from '../chat/model-type';
import { ajv } from '../http/validation';
import type { Channel } from '../upstreams/channel';
import { assembleReport, isDraftObject, ISSUE, type QualityIssue, type Report, type ReportContext } from './report';
import { DRAFT_SCHEMA, DRAFT_SCHEMA_NAME, REPORT_V2_SCHEMA } from './report-schema';
import type { Transcript } from './transcript';

/**
 * The summary step of `service-minutes` (and of POST /v1/summaries): one structured-output chat
 * completion on a fast catalog chat model, whose answer (a draft) the gateway validates against
 * the transcript and turns into the report version 2.
 */

const INSTRUCTIONS = [
  'You write meeting minutes from a transcript. Answer with one JSON object that follows the given JSON schema, nothing else.',
  'Each transcript line reads: [segment id | start-end ms | speaker id] text.',
  'Every block is {text, sourceSegmentIds}: cite the ids of the segments it is based on, and only ids that appear in the transcript.',
  'Times are milliseconds inside the recording. Chapters name their first and last segment. Speaker ids are the ones listed.',
  'Write in the language of the transcript. Unknown values are empty strings.',
].join('\n');

/** Upper bound of what one summary may cost: the whole input budget and the maximum output. */
export function summaryUpperBound(chatModel: ModelEntry, maxOutputTokens: number): number {
  const caps = chatCapabilities(chatModel);
  const output = Math.min(maxOutputTokens, caps.max_output_tokens);
  return tokenCharge(chatPricing(chatModel), Math.max(0, caps.context_window - output), output);
}

export interface SummaryPlan {
  readonly body: Record<string, unknown>;
  readonly promptTokens: number;
  readonly maxTokens: number;
  /** Issues known before the model runs (a transcript cut to fit the context window). */
  readonly preIssues: QualityIssue[];
  /** What this summary may cost at most (reserved for POST /v1/summaries). */
  readonly estimate: number;
  /** The chat model's tokenizer, for counting an answer that reports no usage. */
  readonly tokenizer?: TokenizerEncoding;
}

function line(s: Transcript['segments'][number]): string {
  return `[${s.id} | ${s.startMs}-${s.endMs} ms | ${s.speakerId ?? ''}] ${s.text.replace(/\s+/g, ' ')}`;
}

/**
 * The chat request of a summary. The transcript goes in as numbered lines; when it does not fit
 * the model's context window (beside the maximum output), the lines that fit are sent and the
 * report records `transcript_truncated`.
 */
export function planSummary(chatModel: ModelEntry, transcript: Transcript, maxOutputTokens: number): SummaryPlan {
  const caps = chatCapabilities(chatModel);
  const maxTokens = Math.min(maxOutputTokens, caps.max_output_tokens);
  const budget = caps.context_window - maxTokens;
  const header = [
    `Recording length: ${transcript.durationMs} ms. Language: ${transcript.language}.`,
    `Speakers: ${transcript.speakers.map((s) => `${s.id} = ${s.displayName}`).join('; ') || 'not identified'}.`,
    'Transcript:',
  ].join('\n');
  const system: TokenMessage = { role: 'system', content: INSTRUCTIONS };
  let used = countMessageTokens([system, { role: 'user', content: header }], chatModel.tokenizer);
  const lines: string[] = [];
  for (const segment of transcript.segments) {
    const text = line(segment);
    const tokens = countTokens(text, chatModel.tokenizer);
    if (used + tokens > budget) break;
    used += tokens;
    lines.push(text);
  }
  const preIssues: QualityIssue[] = lines.length < transcript.segments.length ? [{ code: ISSUE.transcriptTruncated, path: '/segments' }] : [];
  const messages: TokenMessage[] = [system, { role: 'user', content: `${header}\n${lines.join('\n')}` }];
  const promptTokens = countMessageTokens(messages, chatModel.tokenizer);
  return {
    body: {
      model: caps.upstream_model ?? chatModel.id,
      messages,
      max_tokens: maxTokens,
      temperature: 0.2,
      stream: false,
      response_format: { type: 'json_schema', json_schema: { name: DRAFT_SCHEMA_NAME, strict: true, schema: DRAFT_SCHEMA } },
    },
    promptTokens,
    maxTokens,
    preIssues,
    estimate: tokenCharge(chatPricing(chatModel), promptTokens, maxTokens),
    ...(chatModel.tokenizer ? { tokenizer: chatModel.tokenizer } : {}),
  };
}

interface Completion {
  choices?: { message?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

export type SummaryOutcome =
  | { readonly kind: 'report'; readonly report: Report; readonly inputTokens: number; readonly outputTokens: number }
  | { readonly kind: 'unparseable'; readonly reason: string; readonly inputTokens: number; readonly outputTokens: number };

const validateReport = ajv.compile(REPORT_V2_SCHEMA);

/**
 * Calls the chat channel once. An UpstreamError (no answer, an error status) is thrown to the
 * caller, who decides about retries; an answer that is not a usable draft is `unparseable`, with
 * the tokens it cost.
 */
export async function writeSummary(channel: Channel, plan: SummaryPlan, context: ReportContext, signal?: AbortSignal): Promise<SummaryOutcome> {
  const completion = await channel.json<Completion>('POST', '/chat/completions', plan.body, signal);
  const choice = completion.choices?.[0];
  const content = typeof choice?.message?.content === 'string' ? choice.message.content : '';
  const inputTokens = nonNegative(completion.usage?.prompt_tokens) ?? plan.promptTokens;
  const outputTokens = nonNegative(completion.usage?.completion_tokens) ?? countTokens(content, plan.tokenizer);
  let draft: unknown;
  try {
    draft = JSON.parse(content);
  } catch {
    return { kind: 'unparseable', reason: choice?.finish_reason === 'length' ? 'the summary was cut off at its token limit' : 'the summary is not valid JSON', inputTokens, outputTokens };
  }
  const report = assembleReport(draft, context, plan.preIssues);
  if (!report) return { kind: 'unparseable', reason: isDraftObject(draft) ? 'the summary has no usable content' : 'the summary is not a JSON object', inputTokens, outputTokens };
  if (!validateReport(report)) throw new Error(`assembled report does not match the report schema: ${ajv.errorsText(validateReport.errors)}`);
  return { kind: 'report', report, inputTokens, outputTokens };
}

function nonNegative(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
