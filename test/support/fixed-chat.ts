import { expect } from 'chai';
import type OpenAI from 'openai';
import { APIError } from 'openai';
import { tokenCharge } from '../../src/billing/money';
import { countMessageTokens } from '../../src/billing/tokens';

const FAST = { input_per_million: 1_000_000, output_per_million: 4_000_000 };

/**
 * A chat call whose charge equals its estimate: the simulator reports as usage the prompt tokens
 * the gateway counts (chat-fast's tokenizer) and max_tokens, so a settlement frees no budget.
 */
export const FIXED_CALL = fixedCall();
export const FIXED_CHARGE = tokenCharge(FAST, countMessageTokens(FIXED_CALL.messages, 'o200k_base'), FIXED_CALL.max_tokens);

function fixedCall() {
  for (let prompt = 1; prompt < 100; prompt++) {
    const messages = [{ role: 'user' as const, content: `budget probe [sim:usage=${prompt},5]` }];
    if (countMessageTokens(messages, 'o200k_base') === prompt) return { model: 'chat-fast', messages, max_tokens: 5 };
  }
  throw new Error('no self-describing prompt');
}

/** Fires `n` fixed calls at once through the SDK; counts successes and the budget refusals. */
export async function fireFixedCalls(clients: readonly OpenAI[], n: number): Promise<{ ok: number; refused: APIError[] }> {
  const outcomes = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      clients[i % clients.length]!.chat.completions.create(FIXED_CALL).then(
        () => 'ok' as const,
        (err: unknown) => err,
      ),
    ),
  );
  const refused = outcomes.filter((o): o is APIError => o instanceof APIError);
  const others = outcomes.filter((o) => o !== 'ok' && !(o instanceof APIError));
  expect(others, 'only budget refusals fail').to.deep.equal([]);
  return { ok: outcomes.filter((o) => o === 'ok').length, refused };
}

export function expectBudgetRefusals(refused: readonly APIError[]): void {
  for (const err of refused) {
    expect(err.status).to.equal(402);
    expect(err.code).to.equal('key_budget_exceeded');
    expect(err.headers?.get('x-should-retry')).to.equal('false');
  }
}

