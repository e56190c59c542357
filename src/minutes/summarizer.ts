import type { ModelEntry } from '../billing/catalog';
import { tokenCharge } from '../billing/money';
import { countMessageTokens, countTokens, splitTokens, type TokenizerEncoding, type TokenMessage } from '../billing/tokens';
import { chatCapabilities, chatPricing } from '../chat/model-type';
import { ajv, compiledOnFirstUse } from '../http/validation';
import { chatCompletion, type OpenAiRelay } from '../upstreams/openai/relay';
import { assembleReport, isDraftObject, ISSUE, type QualityIssue, type Report, type ReportContext } from './report';
import { DRAFT_SCHEMA, DRAFT_SCHEMA_NAME, REPORT_V2_SCHEMA } from './report-schema';
import type { Transcript } from './transcript';

/**
 * The summary step of `service-minutes` (and of POST /v1/summaries): structured-output chat
 * completions on a fast catalog chat model, one per part of the transcript, whose answers (drafts)
 * the gateway validates against the transcript and turns into the report version 2 (merged by
 * summary-merge.ts when there are several parts).
 */

const INSTRUCTIONS = [
  'You write meeting minutes from a transcript. Answer with one JSON object that follows the given JSON schema, nothing else.',
  'Each transcript line reads: [segment id | start-end ms | speaker id] text.',
  'Every block is {text, sourceSegmentIds}: cite the ids of the segments it is based on, and only ids that appear in the transcript.',
  'Times are milliseconds inside the recording. Chapters name their first and last segment. Speaker ids are the ones listed.',
  'Write in the language of the transcript. Unknown values are empty strings.',
].join('\n');

/**
 * How a transcript is cut into summary calls: each call's prompt is at most `partPromptTokens`
 * tokens and asks for at most `maxOutputTokens`; at most `maxParts` calls are made.
 */
export interface PartLimits {
  readonly maxOutputTokens: number;
  readonly partPromptTokens: number;
  readonly maxParts: number;
}

/** One summary call as it will be made. */
export interface SummaryPlan {
  readonly body: Record<string, unknown>;
  readonly promptTokens: number;
  readonly maxTokens: number;
  /** What this call may cost at most (reserved for POST /v1/summaries). */
  readonly estimate: number;
  /** The chat model's tokenizer, for counting an answer that reports no usage. */
  readonly tokenizer?: TokenizerEncoding;
}

/** The calls of a summary (one per part), and the issues known before the model runs (a transcript that did not fit). */
export interface SummaryParts {
  readonly parts: readonly SummaryPlan[];
  readonly preIssues: QualityIssue[];
}

function line(s: Transcript['segments'][number]): string {
  return `[${s.id} | ${s.startMs}-${s.endMs} ms | ${s.speakerId ?? ''}] ${s.text.replace(/\s+/g, ' ')}`;
}

function header(transcript: Pick<Transcript, 'durationMs' | 'language' | 'speakers'>, part: { index: number; fromMs: number } | null): string {
  return [
    `Recording length: ${transcript.durationMs} ms. Language: ${transcript.language}.`,
    `Speakers: ${transcript.speakers.map((s) => `${s.id} = ${s.displayName}`).join('; ') || 'not identified'}.`,
    // A part says where it starts, so the model neither invents an opening nor a closing for it.
    part ? `Transcript part ${part.index + 1}, from ${part.fromMs} ms (the parts are summarised separately, then merged):` : 'Transcript:',
  ].join('\n');
}

const SYSTEM: TokenMessage = { role: 'system', content: INSTRUCTIONS };

function messagesOf(head: string, lines: readonly string[]): TokenMessage[] {
  return [SYSTEM, { role: 'user', content: `${head}\n${lines.join('\n')}` }];
}

/** Prompt tokens of a part with no transcript line and no speaker: what a part's budget must exceed. */
export function partOverheadTokens(): number {
  return countMessageTokens(messagesOf(header({ durationMs: 7_200_000, language: 'en_us', speakers: [] }, { index: 99, fromMs: 7_200_000 }), []));
}

/** The limits of a summary in one call: the whole context window beside the maximum output. */
export function singleCallLimits(chatModel: ModelEntry, maxOutputTokens: number): PartLimits {
  const caps = chatCapabilities(chatModel);
  const maxTokens = Math.min(maxOutputTokens, caps.max_output_tokens);
  return { maxOutputTokens: maxTokens, partPromptTokens: caps.context_window - maxTokens, maxParts: 1 };
}

/**
 * The chat requests of a summary. The transcript goes in as numbered lines, cut into consecutive
 * parts whose prompt fits `partPromptTokens` (counted on the exact messages); one segment too long
 * for a part alone is cut. Lines beyond `maxParts` parts are not sent, and the report records
 * `transcript_truncated`.
 */
export function planSummaryParts(chatModel: ModelEntry, transcript: Transcript, limits: PartLimits): SummaryParts {
  const caps = chatCapabilities(chatModel);
  const maxTokens = Math.min(limits.maxOutputTokens, caps.max_output_tokens);
  const budget = Math.min(limits.partPromptTokens, caps.context_window - maxTokens);
  const inParts = limits.maxParts > 1;
  // promptTokens: the exact prompt's count when the fitting check already took it (the counts of a
  // 2-hour transcript are most of planning's CPU).
  const groups: { head: string; lines: string[]; promptTokens?: number }[] = [];
  let cut = false;
  let i = 0;
  while (i < transcript.segments.length && groups.length < limits.maxParts) {
    const head = header(transcript, inParts ? { index: groups.length, fromMs: transcript.segments[i]!.startMs } : null);
    const lines: string[] = [];
    let used = countMessageTokens(messagesOf(head, []), chatModel.tokenizer);
    for (; i < transcript.segments.length; i++) {
      const text = line(transcript.segments[i]!);
      const tokens = countTokens(text, chatModel.tokenizer);
      if (used + tokens > budget) break;
      used += tokens;
      lines.push(text);
    }
    // Token counts of joined text may differ from the sum of its pieces: check the exact prompt.
    let promptTokens: number | undefined;
    while (lines.length > 1) {
      promptTokens = countMessageTokens(messagesOf(head, lines), chatModel.tokenizer);
      if (promptTokens <= budget) break;
      promptTokens = undefined;
      lines.pop();
      i--;
    }
    if (lines.length === 0) {
      if (i >= transcript.segments.length) break;
      // One segment longer than a whole part: its beginning is sent.
      const room = budget - used - 1;
      if (room <= 0) break; // the header alone fills a part: nothing more can be sent
      lines.push(splitTokens(line(transcript.segments[i]!)).slice(0, room).join(''));
      while (lines[0]!.length > 0 && countMessageTokens(messagesOf(head, lines), chatModel.tokenizer) > budget) lines[0] = splitTokens(lines[0]!).slice(0, -1).join('');
      cut = true;
      i++;
    }
    groups.push({ head, lines, ...(promptTokens === undefined ? {} : { promptTokens }) });
    if (!inParts) break;
  }
  if (groups.length === 0) groups.push({ head: header(transcript, null), lines: [] });
  // A transcript that fits one part reads as a whole (the same prompt as a summary in one call).
  const whole = header(transcript, null);
  if (groups.length === 1 && i >= transcript.segments.length && groups[0]!.head !== whole) groups[0] = { head: whole, lines: groups[0]!.lines };
  const preIssues: QualityIssue[] = cut || i < transcript.segments.length ? [{ code: ISSUE.transcriptTruncated, path: '/segments' }] : [];
  const parts = groups.map(({ head, lines, promptTokens: counted }): SummaryPlan => {
    const messages = messagesOf(head, lines);
    const promptTokens = counted ?? countMessageTokens(messages, chatModel.tokenizer);
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
      estimate: tokenCharge(chatPricing(chatModel), promptTokens, maxTokens),
      ...(chatModel.tokenizer ? { tokenizer: chatModel.tokenizer } : {}),
    };
  });
  return { parts, preIssues };
}

interface Completion {
  choices?: { message?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

export type SummaryOutcome =
  | { readonly kind: 'report'; readonly report: Report; readonly inputTokens: number; readonly outputTokens: number }
  | { readonly kind: 'unparseable'; readonly reason: string; readonly inputTokens: number; readonly outputTokens: number };

const reportCheck = compiledOnFirstUse(REPORT_V2_SCHEMA);

/** Every report the gateway stores matches the report version 2 schema; anything else is a bug here. */
export function expectReportV2(report: Report): void {
  const validateReport = reportCheck();
  if (!validateReport(report)) throw new Error(`the report does not match the report schema: ${ajv.errorsText(validateReport.errors)}`);
}

/**
 * Calls the chat channel once. An UpstreamError (no answer, an error status) is thrown to the
 * caller, who decides about retries; an answer that is not a usable draft is `unparseable`, with
 * the tokens it cost.
 */
export async function writeSummary(channel: OpenAiRelay, plan: SummaryPlan, context: ReportContext, signal?: AbortSignal): Promise<SummaryOutcome> {
  const completion = await chatCompletion<Completion>(channel, plan.body, signal);
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
  const report = assembleReport(draft, context);
  if (!report) return { kind: 'unparseable', reason: isDraftObject(draft) ? 'the summary has no usable content' : 'the summary is not a JSON object', inputTokens, outputTokens };
  expectReportV2(report);
  return { kind: 'report', report, inputTokens, outputTokens };
}

function nonNegative(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
