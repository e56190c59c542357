import type { ModelEntry } from '../billing/catalog';
import { ApiError } from '../http/errors';
import { chatCapabilities, type ChatCapabilities, type PartAllowances } from './model-type';

/**
 * The checks chat completions and Responses share for what a request asks of its model beyond
 * text chat: one rule each, so both endpoints refuse the same things the same way. Every refusal
 * is 400 naming the field (`param`), thrown while the request is read, before anything is reserved.
 */

/** The capabilities that are a yes or no. */
export type ChatFeature = 'tools' | 'structured_outputs' | 'vision' | 'audio_input' | 'file_input' | 'audio_output' | 'reasoning' | 'logprobs';

/** A field the model cannot take. `param` is the field's path as the client wrote it (`tools[0]`, `input[1].content[0]`). */
export function unsupported(model: ModelEntry, param: string, what: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', `${param}: ${model.id} does not take ${what}`, { param });
}

/** Refuses `param` unless the model's catalog entry grants `feature`. */
export function requireFeature(model: ModelEntry, feature: ChatFeature, param: string, what: string = feature.replace('_', ' ')): void {
  if (chatCapabilities(model)[feature] !== true) throw unsupported(model, param, what);
}

/** The kinds of non-text content part, each reserved at the model's allowance for it. */
export type PartKind = keyof PartAllowances;

const PART_FEATURE: Readonly<Record<PartKind, ChatFeature>> = { image: 'vision', audio: 'audio_input', file: 'file_input' };

/**
 * The tokens one part of `kind` reserves, after refusing it (naming `param`) when the model does
 * not take that kind. The catalog schema makes a model that takes a kind name its allowance.
 */
export function partAllowance(model: ModelEntry, kind: PartKind, param: string): number {
  requireFeature(model, PART_FEATURE[kind], param, `${kind} parts`);
  return chatCapabilities(model).part_allowances?.[kind] ?? 0;
}

/**
 * Refuses a top-level field OpenAI does not define (`known`), unless the model forwards it as a
 * provider extra (`capabilities.extra_params`, such as `top_k` or `thinking`).
 */
export function checkExtraFields(model: ModelEntry, body: Readonly<Record<string, unknown>>, known: readonly string[]): void {
  const extras: ChatCapabilities['extra_params'] = chatCapabilities(model).extra_params ?? [];
  for (const field of Object.keys(body)) {
    if (!known.includes(field) && !extras.includes(field)) {
      throw new ApiError(400, 'unknown_parameter', `${field} is not a field of this endpoint, nor one ${model.id} takes`, { param: field });
    }
  }
}

/** The tokens a JSON value (a tool's definition, a schema) adds to a prompt: its text, counted as the prompt is. */
export function jsonTokens(value: unknown, count: (text: string) => number): number {
  return value === undefined ? 0 : count(JSON.stringify(value));
}
