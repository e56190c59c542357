/**
 * What the gateway reads in a provider's chat answers (completions and stream chunks): the text a
 * choice delivered, which a settlement without reported usage counts, and the finish reason a
 * client may be told.
 */
import type { ChatRequest } from './schemas';

/** A completion's message or a chunk's delta: the members that carry delivered output. */
export interface ChatOutput {
  readonly role?: string;
  readonly content?: string | null;
  readonly refusal?: string | null;
  readonly tool_calls?: readonly { readonly index?: number; readonly function?: { readonly name?: string; readonly arguments?: string } }[];
  readonly function_call?: { readonly name?: string; readonly arguments?: string };
  readonly [more: string]: unknown;
}

export interface ChatChoice {
  readonly index: number;
  readonly finish_reason: string | null;
  readonly [more: string]: unknown;
}

/**
 * The text one message or delta delivered: its content, its refusal and the names and arguments
 * of the calls it made, as the provider counts them as output. A text-only delta is its content.
 */
export function deliveredText(output: ChatOutput): string {
  const content = output.content ?? '';
  if (output.refusal == null && output.tool_calls === undefined && output.function_call === undefined) return content;
  let text = content + (output.refusal ?? '');
  for (const call of output.tool_calls ?? []) text += (call.function?.name ?? '') + (call.function?.arguments ?? '');
  return text + (output.function_call?.name ?? '') + (output.function_call?.arguments ?? '');
}

/**
 * The finish reason the client is told. `tool_calls` and `function_call` only answer a request
 * that offered tools (or functions): the spec's clients, which sent neither, know only stop,
 * length, content_filter and null, and a provider that calls a tool nobody offered (a built-in
 * one, or a confused model) has ended its turn as far as such a client can act on it: `stop`.
 */
export function finishReasonFor(reason: string | null, request: Pick<ChatRequest, 'tools' | 'functions'>): string | null {
  if (reason === 'tool_calls' && request.tools === undefined) return 'stop';
  if (reason === 'function_call' && request.functions === undefined) return 'stop';
  return reason;
}

/** `choices` with each finish reason as the client may be told it: the same array when none changes (the usual case). */
export function withClientFinishReasons<C extends ChatChoice>(choices: readonly C[], request: Pick<ChatRequest, 'tools' | 'functions'>): readonly C[] {
  if (!choices.some((choice) => finishReasonFor(choice.finish_reason, request) !== choice.finish_reason)) return choices;
  return choices.map((choice) => ({ ...choice, finish_reason: finishReasonFor(choice.finish_reason, request) }));
}
