import { expect } from 'chai';
import { ApiError } from '../../src/http/errors';
import { validator } from '../../src/http/validation';

/** What validator() refuses `body` with under `schema`: status, code, param and message. */
function refusal(schema: Record<string, unknown>, body: unknown): { status: number; code: string; param: unknown; message: string } {
  try {
    validator(schema)(body);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: err.status, code: err.code, param: err.options.param, message: err.message };
  }
  throw new Error(`accepted ${JSON.stringify(body)}`);
}

const object = (properties: Record<string, unknown>, more: Record<string, unknown> = {}) => ({ type: 'object', properties, additionalProperties: false, ...more });
const KINDS = ['text', 'image_url', 'video_url', 'audio_url', 'draft_task'];
/** A video content item as src/video/request.ts has it: a type, and the member that type names. */
const item = object(
  { type: { type: 'string', enum: KINDS }, text: { type: 'string' }, image_url: { type: 'object' } },
  {
    required: ['type'],
    allOf: [
      { if: { properties: { type: { const: 'text' } }, required: ['type'] }, then: { required: ['text'] } },
      { if: { properties: { type: { const: 'image_url' } }, required: ['type'] }, then: { required: ['image_url'] } },
    ],
  },
);

/** Objects of two forms, told apart by `role` (each form fixes it to one value). */
const TAGGED = {
  type: 'array',
  items: {
    oneOf: [
      object({ role: { type: 'string', enum: ['user'] }, content: { type: 'string' } }, { required: ['role', 'content'] }),
      object({ role: { type: 'string', enum: ['tool'] }, content: { type: 'string' }, tool_call_id: { type: 'string' } }, { required: ['role', 'content', 'tool_call_id'] }),
    ],
  },
};
/** A string, or parts told apart by a nullable `type`. */
const PARTS = {
  oneOf: [
    { type: 'string' },
    {
      type: 'array',
      items: {
        oneOf: [
          object({ type: { type: 'string', enum: ['text'] }, text: { type: 'string' } }, { required: ['type', 'text'] }),
          object({ type: { anyOf: [{ type: 'string', enum: ['image_url'] }, { type: 'null' }] }, image_url: { type: 'string' } }, { required: ['type', 'image_url'] }),
        ],
      },
    },
  ],
};

describe('validation messages: the field as a client writes it and what is wrong with it, in plain words', () => {
  const cases: [keyword: string, schema: Record<string, unknown>, body: unknown, param: string, message: string][] = [
    ['required', object({ model: { type: 'string' } }, { required: ['model'] }), {}, 'model', 'model is required'],
    ['required, nested', object({ a: object({ b: { type: 'string' } }, { required: ['b'] }) }), { a: {} }, 'a.b', 'a.b is required'],
    ['required, a member with listed values', object({ content: { type: 'array', items: item } }), { content: [{ text: 'hi' }] }, 'content[0].type', `content[0] needs a type: one of ${KINDS.join(', ')}`],
    ['required by the type an item names', object({ content: { type: 'array', items: item } }), { content: [{ type: 'image_url', text: 'x' }] }, 'content[0].image_url', 'content[0].image_url is required'],
    ['type', object({ temperature: { type: 'number' } }), { temperature: '1' }, 'temperature', 'temperature must be a number'],
    ['type, integer', object({ n: { type: 'integer' } }), { n: 1.5 }, 'n', 'n must be an integer'],
    ['type, several', object({ name: { type: ['string', 'null'] } }), { name: 5 }, 'name', 'name must be a string or null'],
    ['type, boolean', object({ stream: { type: 'boolean' } }), { stream: 'yes' }, 'stream', 'stream must be a boolean'],
    ['type, the body', object({}), [], 'body', 'body must be an object'],
    ['enum', object({ ratio: { type: 'string', enum: ['16:9', '1:1', 'adaptive'] } }), { ratio: '2:1' }, 'ratio', 'ratio must be one of 16:9, 1:1, adaptive'],
    ['enum of one', object({ mode: { enum: ['auto'] } }), { mode: 'x' }, 'mode', 'mode must be auto'],
    ['const', object({ n: { type: 'integer', const: 1 } }), { n: 2 }, 'n', 'n must be 1'],
    ['minimum', object({ seed: { type: 'integer', minimum: -1 } }), { seed: -2 }, 'seed', 'seed must be at least -1'],
    ['maximum', object({ seed: { type: 'integer', maximum: 4294967295 } }), { seed: 4294967296 }, 'seed', 'seed must be at most 4294967295'],
    ['exclusiveMinimum', object({ top_p: { type: 'number', exclusiveMinimum: 0 } }), { top_p: 0 }, 'top_p', 'top_p must be greater than 0'],
    ['exclusiveMaximum', object({ x: { type: 'number', exclusiveMaximum: 1 } }), { x: 1 }, 'x', 'x must be less than 1'],
    ['multipleOf', object({ x: { type: 'integer', multipleOf: 8 } }), { x: 12 }, 'x', 'x must be a multiple of 8'],
    ['minLength of 1', object({ model: { type: 'string', minLength: 1 } }), { model: '' }, 'model', 'model must not be empty'],
    ['minLength', object({ code: { type: 'string', minLength: 18 } }), { code: 'abc' }, 'code', 'code must be at least 18 characters long'],
    ['maxLength', object({ safety_identifier: { type: 'string', maxLength: 64 } }), { safety_identifier: 'x'.repeat(65) }, 'safety_identifier', 'safety_identifier must be at most 64 characters long'],
    ['minItems', object({ input: { type: 'array', minItems: 1 } }), { input: [] }, 'input', 'input must have at least 1 item'],
    ['maxItems', object({ content: { type: 'array', maxItems: 16 } }), { content: Array(17).fill(1) }, 'content', 'content must have at most 16 items'],
    ['minProperties', object({ timezone: { type: 'string' } }, { minProperties: 1 }), {}, 'body', 'body must have at least 1 field'],
    ['maxProperties', { type: 'object', maxProperties: 2 }, { a: 1, b: 2, c: 3 }, 'body', 'body must have at most 2 fields'],
    ['uniqueItems', object({ allowed_models: { type: 'array', uniqueItems: true } }), { allowed_models: ['a', 'b', 'a'] }, 'allowed_models', 'allowed_models must not hold the same item twice: [0] and [2] are equal'],
    ['pattern', object({ file_url: { type: 'string', pattern: '^https?://' } }), { file_url: 'ftp://x' }, 'file_url', 'file_url must match the pattern ^https?://'],
    [
      'pattern that narrows a format',
      object({ at: { type: 'string', pattern: '^\\d{4}-', format: 'date-time' } }),
      { at: 'yesterday' },
      'at',
      'at must be an RFC 3339 date-time with its offset, e.g. 2026-11-01T00:00:00+08:00',
    ],
    ['format', object({ expires_at: { type: 'string', format: 'date-time' } }), { expires_at: '2026-13-01T00:00:00Z' }, 'expires_at', 'expires_at must be an RFC 3339 date-time with its offset, e.g. 2026-11-01T00:00:00+08:00'],
    ['format without a name of its own', object({ ip: { type: 'string', format: 'ipv4' } }), { ip: 'x' }, 'ip', 'ip must be a valid ipv4'],
    ['additionalProperties', object({ model: { type: 'string' } }), { colour: 'blue' }, 'colour', 'colour is not a recognised field'],
    ['additionalProperties, a name holding a dot', object({ metadata: object({}) }), { metadata: { 'a.b': 1 } }, 'metadata["a.b"]', 'metadata["a.b"] is not a recognised field'],
    ['additionalProperties, a name with a space', object({ metadata: object({}) }), { metadata: { 'a b': 1 } }, 'metadata.a b', 'metadata.a b is not a recognised field'],
    ['additionalProperties, a name of digits is a member', object({ metadata: object({}) }), { metadata: { 0: 1 } }, 'metadata.0', 'metadata.0 is not a recognised field'],
    ['not a value', object({ duration: { type: 'integer', minimum: -1, maximum: 600, not: { const: 0 } } }), { duration: 0 }, 'duration', 'duration must not be 0'],
    ['not one of values', object({ x: { type: 'string', not: { enum: ['a', 'b'] } } }), { x: 'a' }, 'x', 'x must not be one of a, b'],
    ['not a member', object({ x: { type: 'object', not: { required: ['y'] } } }), { x: { y: 1 } }, 'x', 'x must not have y'],
    ['not another form', object({ x: { not: { type: 'string' } } }), { x: 'a' }, 'x', 'x has a form that is not accepted here'],
    ['false schema', object({ x: false }), { x: 1 }, 'x', 'x is not accepted here'],
    ['dependencies', { type: 'object', dependencies: { from: ['to'] } }, { from: 1 }, 'to', 'to is required when from is given'],
    ['anyOf: every branch of another kind', object({ stop: { anyOf: [{ type: 'string' }, { type: 'array', maxItems: 4 }] } }), { stop: 5 }, 'stop', 'stop must be a string or an array'],
    ['anyOf: the branch of the value’s kind', object({ stop: { anyOf: [{ type: 'string' }, { type: 'array', maxItems: 4 }] } }), { stop: [1, 2, 3, 4, 5] }, 'stop', 'stop must have at most 4 items'],
    ['anyOf: the branch that reached deepest', object({ input: { anyOf: [{ type: 'string' }, { type: 'array', items: object({ role: { enum: ['user', 'system'] } }) }] } }), { input: [{ role: 'robot' }] }, 'input[0].role', 'input[0].role must be one of user, system'],
    ['anyOf: a value or a kind', object({ duration: { anyOf: [{ const: -1 }, { type: 'string' }] } }), { duration: 5 }, 'duration', 'duration must be -1 or a string'],
    ['anyOf: a string or null, failing the string', object({ timezone: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'null' }] } }), { timezone: '' }, 'timezone', 'timezone must not be empty'],
    [
      'anyOf: each branch missing members',
      object({ input: { type: 'array', items: { type: 'object', anyOf: [{ required: ['role', 'content'] }, { required: ['type'] }] } } }),
      { input: [{}] },
      'input[0]',
      'input[0] needs either role and content, or type',
    ],
    ['anyOf: one member missing in each branch', object({ input: { type: 'array', items: { type: 'object', anyOf: [{ required: ['role', 'content'] }, { required: ['type'] }] } } }), { input: [{ role: 'user' }] }, 'input[0]', 'input[0] needs either content or type'],
    ['oneOf: no branch', object({ x: { oneOf: [{ type: 'integer' }, { type: 'boolean' }] } }), { x: 'a' }, 'x', 'x must be an integer or a boolean'],
    ['oneOf: two branches', object({ x: { oneOf: [{ type: 'integer' }, { type: 'number' }] } }), { x: 1 }, 'x', 'x matches more than one of the forms it may take; it must match exactly one'],
    // Forms told apart by a tag, as OpenAI's messages are by role: the form the tag names is the one refused.
    ['oneOf by a tag: the tagged form’s missing member', object({ messages: TAGGED }), { messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id', 'messages[0].tool_call_id is required'],
    ['oneOf by a tag: the tagged form’s wrong member', object({ messages: TAGGED }), { messages: [{ role: 'user', content: 5 }] }, 'messages[0].content', 'messages[0].content must be a string'],
    ['oneOf by a tag: an unknown tag, with every value it may take', object({ messages: TAGGED }), { messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role', 'messages[0].role must be one of user, tool'],
    ['oneOf by a tag: no tag', object({ messages: TAGGED }), { messages: [{ content: 'x' }] }, 'messages[0].role', 'messages[0] needs a role: one of user, tool'],
    ['oneOf by a tag: an unknown tag further in than a form of another kind', object({ content: PARTS }), { content: [{ type: 'video' }] }, 'content[0].type', 'content[0].type must be one of text, image_url'],
  ];

  for (const [keyword, schema, body, param, message] of cases) {
    it(`${keyword}: ${message}`, () => {
      expect(refusal(schema, body)).to.deep.equal({ status: 400, code: 'invalid_request', param, message });
    });
  }
});
