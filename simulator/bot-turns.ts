/**
 * What the simulated bots answer, whichever provider's protocol carries them (the simulated Coze,
 * simulator/providers/coze.ts, and Ark's bots, simulator/providers/ark/bots.ts): a Pro bot and a
 * basic one, the answer, its follow-up suggestions and its reference card, and the usage, steered
 * by directives in the last user message:
 *
 * `[sim:tokens=N]` the answer has N tokens (`word1 … wordN`); `[sim:usage=P,C]` the reported usage
 * is P input and C output tokens whatever the text (otherwise it is counted with the gateway's
 * token rule, so a gateway that ignored the report could not be told apart); `[sim:fail]`,
 * `[sim:status=NNN]` the provider refuses the turn (each provider in its own error shape);
 * `[sim:delay=MS]` the answer waits; `[sim:stall]` a stream sends two tokens and then nothing, a
 * non-streamed turn never finishes; `[sim:stream-error=CODE]` a stream sends two tokens then the
 * provider's error CODE (a non-streamed turn fails with it).
 *
 * The answer mentions the user's previous question when the bot sees one: from the provider's own
 * memory of the conversation (Coze) or from the messages it was sent (Ark's bots keep none).
 */
import { countMessageTokens, countTokens, splitTokens, type TokenMessage } from '../src/billing/tokens';
import { parseDirectives, stripDirectives, type SimDirectives } from './directives';

export interface SimBot {
  /** A Pro bot answers with follow-up suggestions and cards. */
  readonly pro: boolean;
  /** The output limit of the bot's model. */
  readonly maxTokens: number;
}

/** The simulated bots, by the gateway's catalog ids (the catalog names no provider id for them: docs/providers.md). */
export const SIM_BOTS: Readonly<Record<string, SimBot>> = { 'webqa-pro': { pro: true, maxTokens: 2048 }, 'webqa-basic': { pro: false, maxTokens: 1024 } };

/** Tokens a stalled stream sends before going quiet. */
export const STALL_AFTER_TOKENS = 2;

export interface SimTurn {
  readonly directives: SimDirectives;
  /** The answer's text in the pieces a stream sends. */
  readonly pieces: readonly string[];
  readonly answer: string;
  readonly followUps: readonly string[];
  readonly cards: readonly Record<string, unknown>[];
  readonly usage: { readonly input: number; readonly output: number };
}

export interface SimTurnInput {
  readonly botId: string;
  readonly bot: SimBot;
  /** The messages as text (media items counted in `mediaParts`). */
  readonly messages: readonly TokenMessage[];
  readonly mediaParts: number;
  /** The conversation's previous question, when the bot knows one. */
  readonly previousQuestion: string | null;
  /** Whether the provider gives a Pro bot's follow-up suggestions (Coze does, Ark's bots do not). */
  readonly followUps: boolean;
  readonly cards: boolean;
  /** The output limit the request sets, besides the bot's own. */
  readonly maxTokens?: number;
}

/** A turn of a simulated bot. */
export function simBotTurn(input: SimTurnInput): SimTurn {
  const { botId, bot, messages, mediaParts, previousQuestion } = input;
  const prompt = lastUserText(messages);
  const directives = parseDirectives(prompt);
  const topic = questionOf(prompt).split(' ').slice(0, 3).join(' ') || 'this';
  const followUps = bot.pro && input.followUps ? [`Tell me more about ${topic}?`, `Which sources cover ${topic}?`, `What changed recently about ${topic}?`] : [];
  const cards =
    bot.pro && input.cards
      ? [{ type: 'link', title: `Sources for ${topic}`, url: `https://docs.example.com/search?q=${encodeURIComponent(topic)}`, description: 'A simulated reference card.' }]
      : [];
  // Follow-ups are generated output too: they come out of the same token budget.
  const followUpTokens = followUps.reduce((n, f) => n + countTokens(f), 0);
  const full = directives.tokens !== undefined ? Array.from({ length: directives.tokens }, (_, i) => `word${i + 1}`).join(' ') : answerText(botId, prompt, mediaParts, previousQuestion);
  const pieces = splitTokens(full).slice(0, Math.max(1, Math.min(bot.maxTokens, input.maxTokens ?? bot.maxTokens) - followUpTokens));
  const usage = directives.usage ? { input: directives.usage.prompt, output: directives.usage.completion } : { input: countMessageTokens(messages), output: pieces.length + followUpTokens };
  return { directives, pieces, answer: pieces.join(''), followUps, cards, usage };
}

/** The user's question without directives, spaces collapsed: what a conversation remembers. */
export function questionOf(text: string): string {
  return stripDirectives(text).split(/\s+/).filter(Boolean).join(' ');
}

export function lastUserText(messages: readonly TokenMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return messages[i]!.content;
  return '';
}

/** The question before the last one among the messages a bot was sent (a provider that keeps no conversation). */
export function previousQuestionIn(messages: readonly TokenMessage[]): string | null {
  const questions = messages.filter((m) => m.role === 'user').map((m) => questionOf(m.content)).filter((q) => q !== '');
  return questions.length >= 2 ? questions[questions.length - 2]! : null;
}

function answerText(botId: string, prompt: string, mediaParts: number, previousQuestion: string | null): string {
  const words = questionOf(prompt).split(' ').filter(Boolean).slice(0, 8);
  const media = mediaParts > 0 ? ` (with ${mediaParts} attachment${mediaParts === 1 ? '' : 's'})` : '';
  const earlier = previousQuestion === null ? '' : ` (earlier in this conversation you asked: "${previousQuestion.split(' ').slice(0, 8).join(' ')}")`;
  return `${botId} answers${media}: ${words.length > 0 ? words.join(' ') : 'hello'}${earlier}`;
}
