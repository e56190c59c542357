import type { ModelEntry } from '../billing/catalog';
import { tokenCharge, tokenLine } from '../billing/money';
import { chatCapabilities } from '../chat/model-type';
import type { MinutesCapabilities } from './model-type';
import { partOverheadTokens, singleCallLimits, type PartLimits } from './summarizer';

/**
 * A `service-minutes` summary is written in parts when the transcript is too long for one call:
 * the summary grows with what it summarises, so one call's output limit (the summary model's
 * catalog entry) bounds how much transcript one call may take. The limits are frozen with the
 * request at submission, and the reservation covers every part the longest accepted recording
 * can need; a transcript denser than planned is cut after the last reserved part
 * (`transcript_truncated`).
 */

/** The summary as a minutes request freezes it: the chat model, its prices and the part limits. */
export interface FrozenSummary {
  readonly model: string;
  readonly input_per_million: number;
  readonly output_per_million: number;
  readonly max_output_tokens: number;
  /** Absent in tasks submitted before summaries were written in parts: one call. */
  readonly part_prompt_tokens?: number;
  readonly max_parts?: number;
}

/**
 * The part limits of a summarising minutes model:
 * - output per call: the summary model's `max_output_tokens` (lowered by the minutes model's
 *   `summary_max_output_tokens`, if any);
 * - prompt per call: what that output can summarise (output ÷ `summary_output_per_prompt_token`),
 *   never more than the context window beside the output;
 * - parts: enough for `max_duration_ms` of speech at `summary_transcript_tokens_per_minute`.
 */
export function partLimitsFor(chat: ModelEntry, minutes: MinutesCapabilities): Pick<FrozenSummary, 'max_output_tokens' | 'part_prompt_tokens' | 'max_parts'> {
  const chatCaps = chatCapabilities(chat);
  const maxOutput = Math.min(minutes.summary_max_output_tokens ?? chatCaps.max_output_tokens, chatCaps.max_output_tokens);
  const window = chatCaps.context_window - maxOutput;
  const ratio = minutes.summary_output_per_prompt_token;
  const density = minutes.summary_transcript_tokens_per_minute;
  const overhead = partOverheadTokens();
  const prompt = ratio ? Math.min(window, Math.floor(maxOutput / ratio)) : window;
  if (!density || prompt <= overhead) return { max_output_tokens: maxOutput, part_prompt_tokens: window, max_parts: 1 };
  const transcriptTokens = Math.ceil((minutes.max_duration_ms / 60_000) * density);
  return { max_output_tokens: maxOutput, part_prompt_tokens: prompt, max_parts: Math.max(1, Math.ceil(transcriptTokens / (prompt - overhead))) };
}

/** The limits a task's summary runs with: the frozen ones, or one call for older tasks. */
export function partLimitsOf(summary: FrozenSummary, chat: ModelEntry): PartLimits {
  if (summary.part_prompt_tokens === undefined || summary.max_parts === undefined) return singleCallLimits(chat, summary.max_output_tokens);
  return { maxOutputTokens: summary.max_output_tokens, partPromptTokens: summary.part_prompt_tokens, maxParts: summary.max_parts };
}

/** What every part of the summary may cost at most together: each at its full prompt and output, at the frozen prices. */
export function summaryReservation(summary: FrozenSummary, chat: ModelEntry): number {
  const limits = partLimitsOf(summary, chat);
  return limits.maxParts * tokenCharge(summary, limits.partPromptTokens, limits.maxOutputTokens);
}

/** One summary call's observed tokens, as a summary's usage lists them (`flash_calls`). */
export interface SummaryCall {
  readonly input_tokens: number;
  readonly output_tokens: number;
}

/** The usage a summary records: totals, and each call (each settled on its own, see summaryCharges). */
export function callsUsage(calls: readonly SummaryCall[]): Record<string, unknown> {
  return {
    flash_input_tokens: calls.reduce((sum, c) => sum + c.input_tokens, 0),
    flash_output_tokens: calls.reduce((sum, c) => sum + c.output_tokens, 0),
    flash_calls: calls,
  };
}

/**
 * What a summary costs: each call by its observed tokens at the frozen prices, each rounded up
 * once (the chat rule). Usage without `flash_calls` (older tasks) is one call of its totals.
 */
export function summaryCharges(prices: Pick<FrozenSummary, 'input_per_million' | 'output_per_million'>, usage: Record<string, unknown> | null) {
  const inputTokens = Number(usage?.flash_input_tokens ?? 0);
  const outputTokens = Number(usage?.flash_output_tokens ?? 0);
  const calls: SummaryCall[] = Array.isArray(usage?.flash_calls)
    ? (usage.flash_calls as SummaryCall[])
    : inputTokens + outputTokens > 0
      ? [{ input_tokens: inputTokens, output_tokens: outputTokens }]
      : [];
  const callLines = calls.map((c) => tokenLine(prices, c.input_tokens, c.output_tokens));
  const callAmounts = calls.map((c, i) => ({ ...c, amount: callLines[i]!.amount }));
  return { inputTokens, outputTokens, callAmounts, callLines, flashAmount: callAmounts.reduce((sum, c) => sum + c.amount, 0) };
}

/** The request of a summary task, frozen at POST /v1/summaries. */
export interface SummaryRequest {
  readonly request_id: string;
  /** The minutes task whose transcript is summarised. */
  readonly task_id: string;
  readonly summary: FrozenSummary;
}
