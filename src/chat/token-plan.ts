import type { ModelEntry } from '../billing/catalog';
import { tokenCharge } from '../billing/money';
import { ApiError } from '../http/errors';
import { chatCapabilities, chatPricing } from './model-type';

/** A chat-like request's token asks, each with the field it came in. */
export interface TokenAsk {
  /** The output limit the client set (`max_tokens`, `max_completion_tokens`, `max_output_tokens`), if any. */
  readonly maxOutput: { readonly value: number; readonly param: string } | undefined;
  /** The prompt's field (`messages`, `input`) and its count by the model's encoding, taken once the output limit passed. */
  readonly prompt: { readonly param: string; readonly count: () => number };
  /** How many completions the call asks for (chat's `n`; 1 when absent): each may write the whole output limit. */
  readonly choices?: number;
}

/** The prompt's tokens, the output limit the model is asked for, and what the call may cost at most. */
export interface TokenPlan {
  readonly promptTokens: number;
  readonly maxOutput: number;
  readonly estimate: number;
}

/** The tokens a planned call may use at most (its prompt and every choice's output limit): what a key's tokens-per-minute limit counts at admission. */
export function plannedTokens(plan: TokenPlan, choices = 1): number {
  return plan.promptTokens + plan.maxOutput * choices;
}

/**
 * What a chat-like call may cost at most, and the output limit the model is asked for: the rules
 * chat completions and Responses share. An output limit above the model's is refused, naming the
 * field it came in; a prompt that fills the model's context window is refused; without a limit
 * the model's own is asked for and reserved, or the room the prompt leaves in the context window
 * when that is less: a provider refuses a request whose prompt and output limit together exceed
 * the window, which the client, having set no limit, did not ask for. Every one of `choices`
 * completions may write the whole output limit, so each is reserved.
 */
export function planTokens(model: ModelEntry, ask: TokenAsk): TokenPlan {
  const caps = chatCapabilities(model);
  if (ask.maxOutput && ask.maxOutput.value > caps.max_output_tokens) {
    throw new ApiError(400, 'invalid_request', `${ask.maxOutput.param} must be at most ${caps.max_output_tokens} for ${model.id}`, { param: ask.maxOutput.param });
  }
  const promptTokens = ask.prompt.count();
  if (promptTokens >= caps.context_window) {
    throw new ApiError(400, 'context_length_exceeded', `the prompt (${ask.prompt.param}) has about ${promptTokens} tokens; ${model.id} accepts ${caps.context_window}`, { param: ask.prompt.param });
  }
  const maxOutput = ask.maxOutput?.value ?? Math.min(caps.max_output_tokens, caps.context_window - promptTokens);
  return { promptTokens, maxOutput, estimate: tokenCharge(chatPricing(model), promptTokens, maxOutput * (ask.choices ?? 1)) };
}
