import { expect } from 'chai';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { z } from 'zod';
import { zodResponseFormat } from 'openai/helpers/zod';
import { sampleJson } from '../../simulator/json-sample';

/** A JSON Schema validator with the string formats, as a client checks a structured answer. */
function validates(schema: object, value: unknown): string | null {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  return validate(value) ? null : ajv.errorsText(validate.errors);
}

describe('upstream simulator: JSON satisfying a schema', () => {
  const Event = z.object({
    title: z.string().min(12).max(20),
    kind: z.enum(['meeting', 'call']),
    version: z.literal(2),
    attendees: z.array(z.object({ name: z.string(), email: z.email() })).min(2),
    starts: z.iso.datetime(),
    day: z.iso.date(),
    link: z.url(),
    id: z.uuid(),
    score: z.number().min(3).max(4),
    count: z.int().gt(5),
    ratio: z.number().lt(-1),
    done: z.boolean(),
    note: z.string().nullable(),
    choice: z.union([z.number(), z.string()]),
    tags: z.array(z.string()).max(0),
  });

  it('satisfies a zod schema as zod emits it (toJSONSchema) and as the openai SDK sends it (strict)', () => {
    const plain = z.toJSONSchema(Event);
    expect(Event.safeParse(sampleJson(plain)).error).to.equal(undefined);
    expect(validates(plain, sampleJson(plain))).to.equal(null);
    const sent = zodResponseFormat(Event, 'event').json_schema.schema!;
    expect(Event.safeParse(sampleJson(sent)).error).to.equal(undefined);
  });

  it('follows $ref into $defs and ends recursive schemas', () => {
    interface Node {
      name: string;
      children: Node[];
      parent?: Node | null;
    }
    const Tree: z.ZodType<Node> = z.object({
      name: z.string(),
      get children() {
        return z.array(Tree);
      },
      get parent() {
        return Tree.nullable().optional();
      },
    });
    const schema = z.toJSONSchema(Tree);
    expect(JSON.stringify(schema)).to.include('$ref');
    const value = sampleJson(schema);
    expect(Tree.safeParse(value).error).to.equal(undefined);
    expect(validates(schema, value)).to.equal(null);
  });

  it('fills every declared property, takes const, the first enum value and the first non-null type, and allOf together', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: ['null', 'string'] },
        b: { const: 'fixed' },
        c: { enum: [7, 8] },
        d: { allOf: [{ type: 'object', properties: { x: { type: 'integer', minimum: 3 } } }, { properties: { y: { type: 'boolean' } } }] },
        e: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
        f: { type: 'object', additionalProperties: { type: 'string' } },
      },
      required: ['a'],
      additionalProperties: false,
    };
    expect(sampleJson(schema)).to.deep.equal({ a: 'a', b: 'fixed', c: 7, d: { x: 3, y: true }, e: ['e', 0], f: {} });
    expect(validates(schema, sampleJson(schema))).to.equal(null);
    expect(sampleJson(undefined)).to.deep.equal({});
  });

  it('keeps a property named __proto__ as data', () => {
    const value = sampleJson({ type: 'object', properties: { ['__proto__']: { type: 'string' } } }) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).to.equal(Object.prototype);
    expect(JSON.parse(JSON.stringify(value))).to.deep.equal(JSON.parse('{"__proto__":"__proto__"}'));
  });
});
