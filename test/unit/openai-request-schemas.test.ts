import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import { expect } from 'chai';
import { generateRequestSchemaModule, GENERATED_PATH, readSource } from '../../scripts/generate-openai-schemas';
import { ApiError } from '../../src/http/errors';
import {
  CHAT_BOUNDS,
  CHAT_REQUEST_FIELDS,
  parseChatRequest,
  parseResponsesRequest,
  RESPONSES_BOUNDS,
  RESPONSES_REQUEST_FIELDS,
} from '../../src/chat/schemas';
import { OPENAI_OPENAPI_PATH, openAiRequestSchemaErrors, openAiSchemaErrors } from '../support/openai-schema';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
type Schema = JsonObject & {
  $ref?: string;
  $recursiveRef?: string;
  nullable?: boolean;
  type?: string;
  enum?: Json[];
  const?: Json;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
};

/** A small seeded generator (mulberry32): the same seed, the same requests. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const documentSchemas = (JSON.parse(readFileSync(OPENAI_OPENAPI_PATH, 'utf8')) as { components: { schemas: Record<string, Schema> } }).components.schemas;
const RECURSIVE_ANCHOR = Object.keys(documentSchemas).find((name) => documentSchemas[name]!.$recursiveAnchor === true);

/** Strings some of OpenAI's patterns and formats take. */
const PATTERN_EXAMPLES: Record<string, string> = { '^[a-zA-Z0-9_-]+$': 'lookup_1', '^tunnel_[a-z0-9]{32}$': `tunnel_${'a1'.repeat(16)}` };

/**
 * A request walked from OpenAI's own schema (the document in ../shared, not the generated module):
 * each union a random branch, each optional member now and then, each nullable value now and then
 * null. Deep structures are cut short (an optional member is left out, an array kept to its minimum),
 * so what comes out is mostly, not always, valid: both outcomes are compared.
 */
function generate(schema: Schema, next: () => number, depth = 0): Json {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  if (schema.$ref) return generate(documentSchemas[schema.$ref.split('/').pop()!]!, next, depth + 1);
  if (schema.$recursiveRef) return generate(documentSchemas[RECURSIVE_ANCHOR!]!, next, depth + 1);
  if (schema.nullable && next() < 0.1) return null;
  if (schema.enum) return pick(schema.enum);
  if ('const' in schema) return schema.const!;
  if (schema.anyOf || schema.oneOf) return generate(pick((schema.anyOf ?? schema.oneOf)!), next, depth + 1);
  if (schema.allOf) {
    const parts = schema.allOf.map((part) => generate(part, next, depth + 1));
    return Object.assign({}, ...parts.filter((part) => part !== null && typeof part === 'object'));
  }
  const type = schema.type ?? (schema.properties ? 'object' : undefined);
  switch (type) {
    case 'string': {
      if (schema.pattern) return PATTERN_EXAMPLES[schema.pattern] ?? 'x';
      if (schema.format === 'uri') return 'https://example.com/a.png';
      const length = Math.max(schema.minLength ?? 0, Math.min(schema.maxLength ?? 12, 1 + Math.floor(next() * 12)));
      return 'abcdefghijklmnopqrstuvwxyz'.repeat(Math.ceil(length / 26)).slice(0, length);
    }
    case 'integer':
    case 'number': {
      const low = schema.minimum ?? -5;
      const high = schema.maximum ?? low + 10_000;
      const value = low + next() * (high - low);
      return type === 'integer' ? Math.max(Math.ceil(low), Math.min(Math.floor(high), Math.round(value))) : value;
    }
    case 'boolean':
      return next() < 0.5;
    case 'null':
      return null;
    case 'array': {
      const count = depth > 8 ? (schema.minItems ?? 0) : (schema.minItems ?? 0) + Math.floor(next() * 3);
      const items = Array.from({ length: Math.min(count, schema.maxItems ?? count) }, () => generate(schema.items ?? {}, next, depth + 1));
      return items;
    }
    case 'object': {
      const out: JsonObject = {};
      const required = new Set(schema.required ?? []);
      for (const [name, member] of Object.entries(schema.properties ?? {})) {
        if (required.has(name) || (depth < 8 && next() < 0.3)) out[name] = generate(member, next, depth + 1);
      }
      if (typeof schema.additionalProperties === 'object' && next() < 0.3) out.key = generate(schema.additionalProperties, next, depth + 1);
      return out;
    }
    default:
      return pick<Json>(['text', 3, true, null, {}, []]);
  }
}

/** Values a mutation puts somewhere in a request: of every kind, and at the edges of the spec's bounds. */
const JUNK: Json[] = [null, 0, -1, 2.5, 3, 'x', '', true, [], {}, [1], { type: 'unknown' }];

/** Every place in a value: the path to each member and item. */
function places(value: Json, path: (string | number)[] = []): (string | number)[][] {
  const here = path.length > 0 ? [path] : [];
  if (Array.isArray(value)) return [...here, ...value.flatMap((item, i) => places(item, [...path, i]))];
  if (value !== null && typeof value === 'object') return [...here, ...Object.entries(value).flatMap(([key, member]) => places(member, [...path, key]))];
  return here;
}

/** `value` with one place replaced by junk, or one member removed. */
function mutate(value: Json, next: () => number): Json {
  const copy = structuredClone(value);
  const all = places(copy);
  if (all.length === 0) return copy;
  const path = all[Math.floor(next() * all.length)]!;
  let parent = copy as Record<string | number, Json>;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, Json>;
  const last = path[path.length - 1]!;
  if (!Array.isArray(parent) && next() < 0.2) delete parent[last];
  else parent[last] = JUNK[Math.floor(next() * JUNK.length)]!;
  return copy;
}

function accepts(parse: (body: unknown) => unknown, body: Json): boolean {
  try {
    parse(structuredClone(body));
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) return false;
    throw err;
  }
}

/** The top-level nulls removed, as the gateway reads them (null means unset). */
function withoutTopLevelNulls(body: Json, required: readonly string[]): Json {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([key, value]) => value !== null || required.includes(key)));
}

/** The spec's bounds alone, by an ajv of their own. */
const boundsAjv = new Ajv({ strict: false });

const REQUESTS = [
  { root: 'CreateChatCompletionRequest', parse: parseChatRequest, bounds: CHAT_BOUNDS },
  { root: 'CreateResponse', parse: parseResponsesRequest, bounds: RESPONSES_BOUNDS },
] as const;

describe("the request schemas generated from OpenAI's official OpenAPI document", () => {
  it('are what the generator writes from the document in ../shared (run `npm run openai:schemas` when this fails)', () => {
    expect(readFileSync(GENERATED_PATH, 'utf8')).to.equal(generateRequestSchemaModule(readSource()));
  });

  for (const { root, parse, bounds } of REQUESTS) {
    it(`agree with OpenAI's ${root}, in both directions, on requests generated from it and mutated`, function () {
      this.timeout(60_000);
      const withinBounds = boundsAjv.compile(bounds);
      const tally = { accepted: 0, refused: 0 };
      const disagreements: string[] = [];
      for (let seed = 1; seed <= 1000; seed++) {
        const next = random(seed);
        const generated = generate(documentSchemas[root]!, next) as JsonObject;
        // The spec's required members, so that requests within its bounds are common.
        if (next() < 0.9) Object.assign(generated, root === 'CreateResponse' ? { model: 'chat-fast', input: generated.input ?? 'Hello' } : { model: 'chat-fast' });
        for (const body of [generated, mutate(generated, next), mutate(mutate(generated, next), next)]) {
          const read = withoutTopLevelNulls(body, bounds.required);
          const openAiValid = openAiRequestSchemaErrors(root, read) === null;
          const gateway = accepts(parse, body);
          tally[gateway ? 'accepted' : 'refused']++;
          if (gateway && !openAiValid) disagreements.push(`seed ${seed}: the gateway accepts what OpenAI's schema refuses (${openAiRequestSchemaErrors(root, read)}): ${JSON.stringify(body)}`);
          if (!gateway && openAiValid && withinBounds(read)) disagreements.push(`seed ${seed}: the gateway refuses what OpenAI's schema and the spec's bounds accept: ${JSON.stringify(body)}`);
        }
      }
      expect(disagreements.slice(0, 5)).to.deep.equal([]);
      // Both outcomes are exercised, many times.
      expect(tally.accepted, JSON.stringify(tally)).to.be.greaterThan(500);
      expect(tally.refused, JSON.stringify(tally)).to.be.greaterThan(500);
    });
  }

  it('name the top-level fields OpenAI defines, so that the others can be told apart', () => {
    expect([...CHAT_REQUEST_FIELDS]).to.include.members(['model', 'messages', 'tools', 'tool_choice', 'response_format', 'n', 'max_completion_tokens', 'reasoning_effort', 'stream_options']);
    expect([...RESPONSES_REQUEST_FIELDS]).to.include.members(['model', 'input', 'tools', 'text', 'reasoning', 'previous_response_id', 'include', 'max_output_tokens']);
    for (const extra of ['top_k', 'thinking', 'enable_thinking']) expect(CHAT_REQUEST_FIELDS.has(extra) || RESPONSES_REQUEST_FIELDS.has(extra), extra).to.equal(false);
  });
});

describe('the chat and Responses request validators', () => {
  const user = { role: 'user', content: 'Hello' };
  const toolCall = { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } };
  const tool = { type: 'function', function: { name: 'weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };

  /** What the validator refuses `body` with: the field and the message. */
  const refusal = (parse: (body: unknown) => unknown, body: unknown) => {
    try {
      parse(body);
    } catch (err) {
      if (err instanceof ApiError) return [err.options.param, err.message];
      throw err;
    }
    throw new Error(`accepted ${JSON.stringify(body)}`);
  };

  it("accept what OpenAI's clients send beyond plain text: tools and tool turns, parts, the developer role, structured output, n, nulls", () => {
    const accepted = [
      { model: 'chat-fast', messages: [user], tools: [tool], tool_choice: 'auto', parallel_tool_calls: true },
      { model: 'chat-fast', messages: [user, { role: 'assistant', content: null, tool_calls: [toolCall] }, { role: 'tool', tool_call_id: 'call_1', content: 'sunny' }], tools: [tool] },
      { model: 'chat-fast', messages: [{ role: 'developer', content: 'Be brief.' }, user] },
      {
        model: 'chat-fast',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } }, { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] }],
      },
      { model: 'chat-fast', messages: [user], response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema: { type: 'object', properties: { a: { type: 'string' } } } } } },
      { model: 'chat-fast', messages: [user], response_format: { type: 'json_object' }, n: 2, logprobs: true, top_logprobs: 3, seed: 7, metadata: { run: '1' }, store: false, reasoning_effort: 'low' },
      { model: 'chat-fast', messages: [user], temperature: null, top_p: null, stop: null, stream_options: null, max_tokens: null, max_completion_tokens: 100, n: null },
      { model: 'chat-fast', messages: [user], top_k: 5, thinking: { type: 'enabled' } },
    ];
    for (const body of accepted) expect(() => parseChatRequest(structuredClone(body)), JSON.stringify(body)).to.not.throw();
    expect(() => parseResponsesRequest({ model: 'chat-fast', input: 'Hi', text: {}, tools: [{ type: 'function', name: 'weather', parameters: {}, strict: true }], max_output_tokens: null, previous_response_id: 'resp_1', reasoning: { effort: 'low' } })).to.not.throw();
  });

  it("follow OpenAI's API where its document is stricter: a Responses input message of parts without `type` fits two forms of a discriminated oneOf", () => {
    // The AI SDK's Responses provider sends this; OpenAI's API takes it; the document read literally refuses it.
    const body = { model: 'chat-fast', input: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'input_text', text: 'Name five colours' }] }] };
    expect(openAiSchemaErrors('CreateResponse', body)).to.include('must match exactly one schema in oneOf');
    expect(openAiRequestSchemaErrors('CreateResponse', body)).to.equal(null);
    expect(() => parseResponsesRequest(structuredClone(body))).to.not.throw();
  });

  it("follow OpenAI's API where its document is stricter: a Responses function tool without `strict`, as the AI SDK 6 sends it", () => {
    const body = { model: 'chat-fast', input: 'Hi', tools: [{ type: 'function', name: 'lookup', description: 'd', parameters: { type: 'object', properties: {} } }] };
    expect(openAiSchemaErrors('CreateResponse', body)).to.not.equal(null);
    expect(openAiRequestSchemaErrors('CreateResponse', body)).to.equal(null);
    expect(() => parseResponsesRequest(structuredClone(body))).to.not.throw();
    // Only `strict`: a function tool without parameters is refused still, as OpenAI's API refuses it.
    expect(() => parseResponsesRequest({ ...body, tools: [{ type: 'function', name: 'lookup' }] })).to.throw();
  });

  it("follow OpenAI's API where its document is stricter: a Responses image part without `detail`, as the AI SDK 6 sends it", () => {
    const body = { model: 'chat-fast', input: [{ role: 'user', content: [{ type: 'input_text', text: 'what' }, { type: 'input_image', image_url: 'https://example.com/a.png' }] }] };
    expect(openAiSchemaErrors('CreateResponse', body)).to.not.equal(null);
    expect(openAiRequestSchemaErrors('CreateResponse', body)).to.equal(null);
    expect(() => parseResponsesRequest(structuredClone(body))).to.not.throw();
  });

  it('read a top-level null as unset: the field is not in the request the handler reads (and forwards)', () => {
    const request = parseChatRequest({ model: 'chat-fast', messages: [user], temperature: null, stop: null, max_completion_tokens: 100 });
    expect(request).to.deep.equal({ model: 'chat-fast', messages: [user], max_completion_tokens: 100 });
    expect(parseResponsesRequest({ model: 'chat-fast', input: 'Hi', max_output_tokens: null })).to.deep.equal({ model: 'chat-fast', input: 'Hi' });
    // A required field is not optional: null is refused as what it is.
    expect(refusal(parseChatRequest, { model: null, messages: [user] })).to.deep.equal(['model', 'model must be a string']);
  });

  it("refuse beyond the spec's bounds in the words they always did", () => {
    const chat = (more: object) => ({ model: 'chat-fast', messages: [user], ...more });
    expect(refusal(parseChatRequest, chat({ temperature: 3 }))).to.deep.equal(['temperature', 'temperature must be at most 2']);
    expect(refusal(parseChatRequest, chat({ temperature: -0.5 }))).to.deep.equal(['temperature', 'temperature must be at least 0']);
    expect(refusal(parseChatRequest, chat({ top_p: 0 }))).to.deep.equal(['top_p', 'top_p must be greater than 0']);
    expect(refusal(parseChatRequest, chat({ max_tokens: 0 }))).to.deep.equal(['max_tokens', 'max_tokens must be at least 1']);
    expect(refusal(parseChatRequest, chat({ max_completion_tokens: 0 }))).to.deep.equal(['max_completion_tokens', 'max_completion_tokens must be at least 1']);
    expect(refusal(parseChatRequest, chat({ model: '' }))).to.deep.equal(['model', 'model must not be empty']);
    expect(refusal(parseChatRequest, chat({ messages: [] }))).to.deep.equal(['messages', 'messages must have at least 1 item']);
    expect(refusal(parseChatRequest, { messages: [user] })).to.deep.equal(['model', 'model is required']);
    expect(refusal(parseResponsesRequest, { model: 'chat-fast', input: [] })).to.deep.equal(['input', 'input must have at least 1 item']);
    expect(refusal(parseResponsesRequest, { model: 'chat-fast', input: 'x', top_p: 0 })).to.deep.equal(['top_p', 'top_p must be greater than 0']);
    expect(refusal(parseResponsesRequest, { model: 'chat-fast', input: 'x', max_output_tokens: 0 })).to.deep.equal(['max_output_tokens', 'max_output_tokens must be at least 1']);
    expect(refusal(parseResponsesRequest, { model: 'chat-fast' })).to.deep.equal(['input', 'input is required']);
  });

  it("refuse what OpenAI's schema refuses, naming the field of the form the client meant", () => {
    const chat = (messages: unknown[], more: object = {}) => ({ model: 'chat-fast', messages, ...more });
    expect(refusal(parseChatRequest, chat([{ role: 'robot', content: 'x' }]))).to.deep.equal(['messages[0].role', 'messages[0].role must be one of developer, system, user, assistant, tool, function']);
    expect(refusal(parseChatRequest, chat([{ role: 'tool', content: 'x' }]))).to.deep.equal(['messages[0].tool_call_id', 'messages[0].tool_call_id is required']);
    expect(refusal(parseChatRequest, chat([{ role: 'user' }]))).to.deep.equal(['messages[0].content', 'messages[0].content is required']);
    expect(refusal(parseChatRequest, chat([{ content: 'x' }]))).to.deep.equal(['messages[0].role', 'messages[0] needs a role: one of developer, system, user, assistant, tool, function']);
    expect(refusal(parseChatRequest, chat([{ role: 'user', content: [{ type: 'video', text: 'x' }] }]))).to.deep.equal([
      'messages[0].content[0].type',
      'messages[0].content[0].type must be one of text, image_url, input_audio, file, refusal',
    ]);
    expect(refusal(parseChatRequest, chat([{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }]))).to.deep.equal(['messages[0].content[0].image_url.url', 'messages[0].content[0].image_url.url is required']);
    expect(refusal(parseChatRequest, chat([user], { tools: [{ type: 'function' }] }))).to.deep.equal(['tools[0].function', 'tools[0].function is required']);
    expect(refusal(parseChatRequest, chat([user], { response_format: { type: 'json_schema' } }))).to.deep.equal(['response_format.json_schema', 'response_format.json_schema is required']);
    expect(refusal(parseChatRequest, chat([user], { n: 0 }))).to.deep.equal(['n', 'n must be at least 1']);
    expect(refusal(parseChatRequest, chat([user], { stop: ['a', 'b', 'c', 'd', 'e'] }))).to.deep.equal(['stop', 'stop must have at most 4 items']);
  });

  it('refuse a Responses input part or item for the form the client meant, though an item_reference may leave its type out', () => {
    const input = (content: unknown) => ({ model: 'chat-fast', input: [{ role: 'user', content }] });
    expect(refusal(parseResponsesRequest, input([{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }]))).to.deep.equal([
      'input[0].content[0].type',
      'input[0].content[0].type must be one of input_text, input_image, input_file',
    ]);
    // Both message forms share their parts: one form's missing member, said once.
    expect(refusal(parseResponsesRequest, input([{ type: 'input_text' }]))).to.deep.equal(['input[0].content[0].text', 'input[0].content[0].text is required']);
    expect(refusal(parseResponsesRequest, { model: 'chat-fast', input: [{ role: 'robot', content: 'x' }] })).to.deep.equal(['input[0].role', 'input[0].role must be one of user, assistant, system, developer']);
  });
});
