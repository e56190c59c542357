import { expect } from 'chai';
import { assertResponseStreamEvent, openAiSchemaErrors, responseStreamEventSchema } from '../support/openai-schema';
import { assertExchangeValidates, type Exchange } from '../support/openai-traffic';

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'chat-fast',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

describe("the test validator of OpenAI's official OpenAPI document", () => {
  it('accepts a chat completion, and refuses one with a finish_reason, a member or a type the schema does not allow', () => {
    expect(openAiSchemaErrors('CreateChatCompletionResponse', completion)).to.equal(null);
    const badFinish = { ...completion, choices: [{ ...completion.choices[0], finish_reason: 'done' }] };
    expect(openAiSchemaErrors('CreateChatCompletionResponse', badFinish)).to.include('/choices/0/finish_reason must be equal to one of the allowed values');
    const { choices: _choices, ...noChoices } = completion;
    expect(openAiSchemaErrors('CreateChatCompletionResponse', noChoices)).to.include("must have required property 'choices'");
    expect(openAiSchemaErrors('CreateChatCompletionResponse', { ...completion, created: 'now' })).to.include('/created must be integer');
  });

  it("reads OpenAPI 3.0's nullable as a null type: null passes where the document says nullable, a string does not", () => {
    // CreateChatCompletionStreamResponse's choice logprobs is `type: object, nullable: true`.
    const chunk = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'a' }, logprobs: null, finish_reason: null }] };
    expect(openAiSchemaErrors('CreateChatCompletionStreamResponse', chunk)).to.equal(null);
    const badLogprobs = { ...chunk, choices: [{ ...chunk.choices[0], logprobs: 'none' }] };
    expect(openAiSchemaErrors('CreateChatCompletionStreamResponse', badLogprobs)).to.not.equal(null);
  });

  it('checks the unixtime format: a negative or fractional time fails', () => {
    expect(openAiSchemaErrors('Model', { id: 'm', object: 'model', created: 1_700_000_000, owned_by: 'gateway' })).to.equal(null);
    expect(openAiSchemaErrors('Model', { id: 'm', object: 'model', created: -1, owned_by: 'gateway' })).to.include('must match format "unixtime"');
  });

  it('requires the usage details of a Response and an error code from the ResponseErrorCode enum', () => {
    const usage = { input_tokens: 1, input_tokens_details: { cached_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 2 };
    expect(openAiSchemaErrors('ResponseUsage', usage)).to.include("must have required property 'cache_write_tokens'");
    expect(openAiSchemaErrors('ResponseUsage', { ...usage, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } })).to.equal(null);
    expect(openAiSchemaErrors('ResponseError', { code: 'upstream_timeout', message: 'x' })).to.include('must be equal to one of the allowed values');
    expect(openAiSchemaErrors('ResponseError', { code: 'server_error', message: 'x' })).to.equal(null);
  });

  it('validates a Responses stream event as the variant its type names, and refuses an unknown type', () => {
    expect(responseStreamEventSchema('response.output_text.delta')).to.equal('ResponseTextDeltaEvent');
    const delta = { type: 'response.output_text.delta', sequence_number: 4, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'a', logprobs: [] };
    expect(() => assertResponseStreamEvent(delta)).to.not.throw();
    const { item_id: _itemId, ...noItem } = delta;
    expect(() => assertResponseStreamEvent(noItem)).to.throw("must have required property 'item_id'");
    expect(() => assertResponseStreamEvent({ type: 'response.made_up' })).to.throw('no Responses stream event response.made_up');
  });
});

describe("a client library's recorded traffic, validated against OpenAI's document", () => {
  const exchange = (path: string, status: number, answer: unknown, streamed: unknown[] | null = null): Exchange => ({ method: 'POST', path, request: {}, status, requestId: 'req_1', streamed, answer });
  const chunk = (content: string) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }] });
  const usage = { input_tokens: 1, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 2 };
  const response = (status: string, responseUsage: unknown) => ({ id: 'resp_1', object: 'response', created_at: 1, status, error: null, incomplete_details: null, instructions: null, metadata: {}, model: 'm', output: [], parallel_tool_calls: true, temperature: 1, tool_choice: 'auto', tools: [], top_p: 1, usage: responseUsage });

  it('checks an answer by its endpoint, every chunk of a stream, and an error by ErrorResponse; an invalid one fails, naming where', () => {
    expect(() => assertExchangeValidates(exchange('/v1/chat/completions', 200, completion))).to.not.throw();
    const badFinish = { ...completion, choices: [{ ...completion.choices[0], finish_reason: 'done' }] };
    expect(() => assertExchangeValidates(exchange('/v1/chat/completions', 200, badFinish))).to.throw('POST /v1/chat/completions (200) does not validate as');

    expect(() => assertExchangeValidates(exchange('/v1/chat/completions', 200, null, [chunk('a'), chunk('b'), '[DONE]']))).to.not.throw();
    const { object: _object, ...noObject } = chunk('b');
    expect(() => assertExchangeValidates(exchange('/v1/chat/completions', 200, null, [chunk('a'), noObject, '[DONE]']))).to.throw("item 1 of POST /v1/chat/completions (200) does not validate as OpenAI's CreateChatCompletionStreamResponse");
    // The item that ends a failed chat stream is the live API's ErrorResponse.
    const errorItem = { error: { message: 'overloaded', type: 'server_error', param: null, code: 'server_overloaded' } };
    expect(() => assertExchangeValidates(exchange('/v1/chat/completions', 200, null, [chunk('a'), errorItem]))).to.not.throw();
    expect(() => assertExchangeValidates(exchange('/v1/chat/completions', 200, null, [chunk('a'), { error: { code: 'x' } }]))).to.throw('the error item of POST /v1/chat/completions');

    expect(() => assertExchangeValidates(exchange('/v1/responses', 400, errorItem))).to.not.throw();
    expect(() => assertExchangeValidates(exchange('/v1/responses', 400, { error: 'text is not a recognised field' }))).to.throw("does not validate as OpenAI's ErrorResponse");
    expect(() => assertExchangeValidates(exchange('/v1/images/generations', 200, null, [{}]))).to.throw('is not a streamed endpoint');
    expect(() => assertExchangeValidates(exchange('/v1/account', 200, {}))).to.throw('no OpenAI schema is known');
  });

  it('lets usage: null through on response.created and response.in_progress only, as the live API sends them', () => {
    const events = (createdUsage: unknown, completedUsage: unknown) => [
      { type: 'response.created', sequence_number: 0, response: response('in_progress', createdUsage) },
      { type: 'response.completed', sequence_number: 1, response: response('completed', completedUsage) },
    ];
    expect(() => assertExchangeValidates(exchange('/v1/responses', 200, null, events(null, usage)))).to.not.throw();
    expect(() => assertResponseStreamEvent(events(null, usage)[0]!), 'the document alone refuses it').to.throw('the response.created event does not validate');
    expect(() => assertExchangeValidates(exchange('/v1/responses', 200, null, events(null, null)))).to.throw('the response.completed event does not validate');
    const { input_tokens_details: _details, ...noDetails } = usage;
    expect(() => assertExchangeValidates(exchange('/v1/responses', 200, null, events(null, noDetails)))).to.throw("must have required property 'input_tokens_details'");
  });
});
