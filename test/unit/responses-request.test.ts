import { expect } from 'chai';
import { validateCatalog, type ModelEntry } from '../../src/billing/catalog';
import { countResponsesInputTokens, countTokens } from '../../src/billing/tokens';
import { chatModelType } from '../../src/chat/model-type';
import { askOfResponses, DEFAULT_BUILT_IN_CALLS } from '../../src/chat/responses-request';
import { builtInToolCalls, responsesSettlement } from '../../src/chat/responses-billing';
import { ApiError } from '../../src/http/errors';
import type { ResponsesRequest } from '../../src/chat/schemas';

const PRO: ModelEntry = validateCatalog(
  {
    models: [
      {
        id: 'pro',
        type: 'chat',
        channel: 'default',
        owned_by: 'gateway',
        created: 0,
        pricing: { input_per_million: 1_000_000, output_per_million: 4_000_000, cached_input_per_million: 250_000, tool_call_prices: { web_search: 25_000, image_generation: 300_000 } },
        capabilities: { max_output_tokens: 100, context_window: 10_000, responses: true, tools: true, structured_outputs: true, vision: true, reasoning: true, extra_params: ['top_k'], part_allowances: { image: 1000 } },
      },
    ],
  },
  't',
  [chatModelType],
)[0]!;
const PLAIN: ModelEntry = { ...PRO, id: 'plain', pricing: { input_per_million: 1_000_000, output_per_million: 4_000_000 }, capabilities: { max_output_tokens: 100, context_window: 10_000, responses: true } };

const count = (text: string) => countTokens(text);
const ask = (model: ModelEntry, fields: Partial<ResponsesRequest>) => askOfResponses(model, { model: model.id, input: 'hi', ...fields }, count);

/** The refusal of `fields`, as `param`. */
function refusedParam(model: ModelEntry, fields: Partial<ResponsesRequest>): string | null | undefined {
  try {
    ask(model, fields);
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    expect((err as ApiError).status).to.equal(400);
    return (err as ApiError).options.param;
  }
  expect.fail('not refused');
}

describe('a Responses request against its model', () => {
  it('refuses what the model does not take, naming the field', () => {
    expect(refusedParam(PLAIN, { tools: [{ type: 'function', name: 'f', parameters: {} }] })).to.equal('tools[0]');
    expect(refusedParam(PRO, { tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }, { type: 'code_interpreter' }] })).to.equal('tools[2].type');
    expect(refusedParam(PLAIN, { text: { format: { type: 'json_schema', name: 'x', schema: {} } } })).to.equal('text.format');
    expect(refusedParam(PLAIN, { reasoning: { effort: 'low' } })).to.equal('reasoning');
    expect(refusedParam(PLAIN, { tool_choice: 'required' })).to.equal('tool_choice');
    expect(refusedParam(PRO, { background: true })).to.equal('background');
    expect(refusedParam(PRO, { conversation: 'conv_123' })).to.equal('conversation');
    expect(refusedParam(PRO, { thinking: { type: 'enabled' } })).to.equal('thinking');
    expect(refusedParam(PRO, { input: [{ role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_audio', input_audio: {} }] }] })).to.equal('input[0].content[1]');
    expect(refusedParam(PLAIN, { input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }] })).to.equal('input[0]');
  });

  it('takes text: {} (LangChain sends it always), verbosity, a provider extra the model lists, and the fields OpenAI defines', () => {
    for (const fields of [{ text: {} }, { text: { verbosity: 'low' } }, { top_k: 5 }, { metadata: { a: 'b' }, store: false, include: [], truncation: 'auto', prompt_cache_key: 'k', safety_identifier: 's', service_tier: 'auto' }]) {
      expect(ask(PRO, fields).builtInToolReserve, JSON.stringify(fields)).to.equal(0);
    }
    expect(ask(PLAIN, { text: {} }).promptTokens()).to.equal(countResponsesInputTokens('hi', count));
  });

  it('reserves the built-in tool calls: max_tool_calls at the dearest listed tool, else a default number of each', () => {
    const tools = [{ type: 'web_search' }, { type: 'image_generation' }, { type: 'function', name: 'f' }];
    expect(ask(PRO, { tools }).builtInToolReserve).to.equal(DEFAULT_BUILT_IN_CALLS * (25_000 + 300_000));
    expect(ask(PRO, { tools, max_tool_calls: 2 }).builtInToolReserve).to.equal(2 * 300_000);
  });

  it('counts tool definitions, the format schema, tool calls and outputs, and each part at its allowance', () => {
    const base = ask(PRO, {}).promptTokens();
    const tools = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
    expect(ask(PRO, { tools }).promptTokens()).to.equal(base + count(JSON.stringify(tools)));
    const format = { type: 'json_schema', name: 'x', schema: { type: 'object' } };
    expect(ask(PRO, { text: { format } }).promptTokens()).to.equal(base + count(JSON.stringify(format)));
    const image = [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_image', image_url: 'https://x/y.png' }] }];
    expect(ask(PRO, { input: image }).promptTokens()).to.equal(countResponsesInputTokens(image, count) + 1000);
    const call = { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{"city":"Paris and its suburbs"}' };
    const result = { type: 'function_call_output', call_id: 'c1', output: 'sunny' };
    const turns = [{ role: 'user', content: 'hi' }, call, result];
    expect(ask(PRO, { input: turns }).promptTokens(), 'the name and arguments of a call, the output of a result').to.equal(2 + (1 + 4) + (count('lookup') + count(call.arguments) + 4) + (1 + 4));
  });
});

describe('the settlement of a Response', () => {
  it('counts the built-in tool calls among the output items, not the client’s own calls', () => {
    expect(builtInToolCalls([{ type: 'web_search_call' }, { type: 'message' }, { type: 'web_search_call' }, { type: 'image_generation_call' }, { type: 'function_call' }, { type: 'custom_tool_call' }])).to.deep.equal({
      web_search: 2,
      image_generation: 1,
    });
  });

  it('prices tokens (cached input at its price) and tool calls in one settlement, recording reasoning tokens', () => {
    const usage = { input_tokens: 1000, input_tokens_details: { cached_tokens: 400 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 6 }, total_tokens: 1010 };
    const { pricing, details } = responsesSettlement(PRO, usage, [{ type: 'web_search_call' }]);
    expect(pricing.lines.map((l) => l.units)).to.deep.equal([{ input_tokens: 600, cached_input_tokens: 400, output_tokens: 10 }, { web_search_calls: 1 }]);
    expect(pricing.amount).to.equal(740 + 25_000);
    expect(details).to.deep.equal({ model: 'pro', input_tokens: 1000, output_tokens: 10, cached_input_tokens: 400, reasoning_tokens: 6, built_in_tool_calls: { web_search: 1 } });
  });

  it('records a plain Response exactly as before: tokens only', () => {
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
    const { pricing, details } = responsesSettlement(PLAIN, usage, [{ type: 'message' }]);
    expect(pricing.lines.map((l) => l.units)).to.deep.equal([{ input_tokens: 10, output_tokens: 5 }]);
    expect(details).to.deep.equal({ model: 'plain', input_tokens: 10, output_tokens: 5 });
  });
});
