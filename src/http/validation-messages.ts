import type { ErrorObject } from 'ajv';
import { fieldName } from './field-name';

/**
 * Why a request was refused, as a client reads it: the field (`param`, as field-name.ts writes it:
 * `content[0].type`) and, in `message`, that field and what is wrong with it in plain words.
 * ajv's own texts ("must NOT be valid", "must have required property 'image_url'") name the
 * schema's rule rather than what the client should send.
 */
export interface Refusal {
  readonly param: string;
  readonly message: string;
}

/** Keywords whose error only says that the errors before it (its branches) all failed. */
const BRANCHING = new Set(['anyOf', 'oneOf', 'if']);
/** Keywords that say what kind of value a field takes: of several failed branches, they join ("a string or null"). */
const KINDS = new Set(['type', 'const', 'enum']);

/**
 * The refusal of `data` for ajv's `errors`, which must come from a schema compiled with
 * `allErrors: false` (one failure, with the branches that led to it) and `verbose: true` (each
 * error carries its schema and the value).
 */
export function refusalOf(errors: readonly ErrorObject[], data: unknown): Refusal {
  const taken = branchTaken(errors, data);
  if (!Array.isArray(taken)) return taken;
  const chosen = closest(taken);
  if (chosen.length === 0) return describe(errors[errors.length - 1]!, data);
  const first = chosen[0]!;
  if (chosen.length > 1 && chosen.every((e) => e.instancePath === first.instancePath)) {
    const at = fieldOf(first.instancePath, [], data);
    if (chosen.every((e) => KINDS.has(e.keyword))) return { param: at, message: `${at} must be ${alternatives(chosen.flatMap(kindsOf))}` };
    if (chosen.every((e) => e.keyword === 'required')) {
      // The same form reached twice (OpenAI's two message forms share their parts) is one alternative.
      const sets = [...new Map(chosen.map(missingOf).map((set) => [set.join('\n'), set])).values()];
      const separator = sets.every((set) => set.length === 1) ? ' or ' : ', or ';
      if (sets.length > 1) return { param: at, message: `${at} needs either ${sets.map((set) => list(set, 'and')).join(separator)}` };
    }
  }
  return describe(first, data);
}

/**
 * A union of object forms told apart by a tag (OpenAI's messages by `role`, content parts and tools
 * by `type`: a member each form fixes to one value) is refused for the form the value's tag names:
 * the errors of the other forms, which only say the tag is not theirs, are left out. When no form
 * takes the tag (it is missing or unknown), the refusal is that tag, with every value it may take.
 * Returns the errors that remain, or that refusal.
 */
function branchTaken(errors: readonly ErrorObject[], data: unknown): ErrorObject[] | Refusal {
  if (!errors.some((e) => BRANCHING.has(e.keyword))) return [...errors];
  const others = errors.map(otherForm);
  const taken = errors.filter((e, i) => others[i] === null && !BRANCHING.has(e.keyword));
  const tags = others.filter((tag): tag is Tag => tag !== null);
  if (tags.length === 0) return [...errors];
  const depth = (pointer: string) => (pointer === '' ? 0 : pointer.split('/').length - 1);
  const deepest = Math.max(...tags.map((tag) => depth(tag.at)));
  // A form of another kind (`content` a string, where the value is a list of parts) says no more than a tag does further in.
  if (taken.some((e) => !KINDS.has(e.keyword) || depth(e.instancePath) > deepest)) return taken;
  const first = tags.find((tag) => depth(tag.at) === deepest)!;
  const values = tags.filter((tag) => tag.member === first.member && tag.at === first.at).flatMap((tag) => tag.values);
  const param = fieldOf(first.at, [first.member], data);
  const missing = !Object.hasOwn(first.object, first.member);
  const allowed = alternatives(values.map(literal));
  return missing ? { param, message: `${fieldOf(first.at, [], data)} needs ${article(first.member)} ${first.member}: ${allowed}` } : { param, message: `${param} must be ${allowed}` };
}

/** The tag of an object form a value did not take: where the object is, its tag member, the values that form fixes. */
interface Tag {
  readonly at: string;
  readonly member: string;
  readonly values: readonly unknown[];
  /** The object, as far as it is known: whether it has the tag. */
  readonly object: object;
}

/** The one value a member's schema fixes, if it fixes one (a tag; one that may be null too counts). */
function fixedValue(schema: unknown): unknown[] | null {
  if (schema === null || typeof schema !== 'object') return null;
  const s = schema as { enum?: unknown[]; const?: unknown; anyOf?: unknown[] };
  if (Array.isArray(s.enum) && s.enum.length === 1) return s.enum;
  if ('const' in s) return [s.const];
  const values = (s.anyOf ?? []).filter((branch) => (branch as { type?: unknown }).type !== 'null');
  return s.anyOf !== undefined && values.length === 1 ? fixedValue(values[0]) : null;
}

/**
 * Whether an error only says that the object took another form: its tag holds another value (an
 * `enum`/`const` of one value on a member), or a required member is missing from a form whose tag
 * the object does not have.
 */
function otherForm(error: ErrorObject): Tag | null {
  if ((error.keyword === 'enum' || error.keyword === 'const') && /\/properties\/[^/]+\/(enum|const)$/.test(error.schemaPath)) {
    const values = fixedValue(error.parentSchema);
    if (values === null) return null;
    const cut = error.instancePath.lastIndexOf('/');
    const member = error.instancePath.slice(cut + 1).replace(/~1/g, '/').replace(/~0/g, '~');
    return { at: error.instancePath.slice(0, cut), member, values, object: { [member]: error.data } };
  }
  if (error.keyword !== 'required') return null;
  const schema = error.parentSchema as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  const value = (error.data ?? {}) as Record<string, unknown>;
  for (const [member, memberSchema] of Object.entries(schema?.properties ?? {})) {
    const values = fixedValue(memberSchema);
    if (values === null) continue;
    const has = Object.hasOwn(value, member);
    const required = schema?.required ?? [];
    // A form whose tag may be left out (OpenAI's item_reference) is still another form when the
    // value has none of the members that form requires.
    const noneOfIts = required.every((name) => !Object.hasOwn(value, name));
    if ((has && value[member] !== values[0]) || (!has && (required.includes(member) || noneOfIts))) return { at: error.instancePath, member, values, object: value };
  }
  return null;
}

/**
 * Of a failure inside `anyOf`/`oneOf` branches, the errors of the branches that came closest: the
 * ones that reached deepest into the value, and of those, the ones where the value had the kind
 * of the branch (`stop: ["a", …five]` is too long an array, not a value that "must be string"),
 * unless every one of them failed on the kind, which then says all the kinds it could be.
 */
function closest(errors: readonly ErrorObject[]): ErrorObject[] {
  const leaves = errors.filter((e) => !BRANCHING.has(e.keyword));
  if (leaves.length === 0) return [];
  const depth = (e: ErrorObject) => (e.instancePath === '' ? 0 : e.instancePath.split('/').length - 1);
  const deepest = Math.max(...leaves.map(depth));
  const reached = leaves.filter((e) => depth(e) === deepest);
  if (reached.every((e) => KINDS.has(e.keyword))) return reached;
  return reached.filter((e) => !KINDS.has(e.keyword));
}

function describe(error: ErrorObject, data: unknown): Refusal {
  const params = error.params as Record<string, unknown>;
  const at = (extra: string[] = []) => fieldOf(error.instancePath, extra, data);
  const say = (what: string, param = at()) => ({ param, message: `${param} ${what}` });
  const limit = params.limit as number;
  switch (error.keyword) {
    case 'required': {
      const property = String(params.missingProperty);
      const allowed = valuesOf((error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties?.[property]);
      if (allowed.length > 0) return { param: at([property]), message: `${at()} needs ${article(property)} ${property}: one of ${allowed.map(shown).join(', ')}` };
      return say('is required', at([property]));
    }
    case 'dependencies':
      return say(`is required when ${String(params.property)} is given`, at([String(params.missingProperty)]));
    case 'additionalProperties':
      return say('is not a recognised field', at([String(params.additionalProperty)]));
    case 'type':
    case 'const':
    case 'enum':
      return say(`must be ${alternatives(kindsOf(error))}`);
    case 'minimum':
      return say(`must be at least ${limit}`);
    case 'maximum':
      return say(`must be at most ${limit}`);
    case 'exclusiveMinimum':
      return say(`must be greater than ${limit}`);
    case 'exclusiveMaximum':
      return say(`must be less than ${limit}`);
    case 'multipleOf':
      return say(`must be a multiple of ${String(params.multipleOf)}`);
    case 'minLength':
      return say(limit === 1 ? 'must not be empty' : `must be at least ${limit} characters long`);
    case 'maxLength':
      return say(`must be at most ${limit} characters long`);
    case 'minItems':
      return say(`must have at least ${counted(limit, 'item')}`);
    case 'maxItems':
      return say(`must have at most ${counted(limit, 'item')}`);
    case 'minProperties':
      return say(`must have at least ${counted(limit, 'field')}`);
    case 'maxProperties':
      return say(`must have at most ${counted(limit, 'field')}`);
    case 'uniqueItems': {
      const [first, second] = [Number(params.j), Number(params.i)].sort((a, b) => a - b);
      return say(`must not hold the same item twice: [${first}] and [${second}] are equal`);
    }
    case 'pattern': {
      // A pattern that only narrows a format (an instant's form) is the format to the client.
      const format = (error.parentSchema as { format?: unknown } | undefined)?.format;
      return say(typeof format === 'string' ? `must be ${formatName(format)}` : `must match the pattern ${String(params.pattern)}`);
    }
    case 'format':
      return say(`must be ${formatName(String(params.format))}`);
    case 'not':
      return say(excluded(error.schema));
    case 'false schema':
      return say('is not accepted here');
    case 'oneOf':
      return say('matches more than one of the forms it may take; it must match exactly one');
    default:
      return say(error.message ?? 'is invalid');
  }
}

/** A value a field may be: a kind of value ("a string"), or a value itself (`literal`: "-1", "text"). */
interface Kind {
  readonly text: string;
  readonly literal: boolean;
}

/** What a kind error (`type`, `const`, `enum`) says the value may be. */
function kindsOf(error: ErrorObject): Kind[] {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'const') return [literal(params.allowedValue)];
  if (error.keyword === 'enum') return (params.allowedValues as unknown[]).map(literal);
  const types = Array.isArray(error.schema) ? (error.schema as unknown[]) : String(params.type).split(',');
  return types.map((type) => ({ text: TYPE_NAMES[String(type)] ?? String(type), literal: false }));
}

function literal(value: unknown): Kind {
  return { text: shown(value), literal: true };
}

/** "one of text, image_url" when only values are allowed, else "-1 or a string". */
function alternatives(kinds: readonly Kind[]): string {
  const texts = [...new Set(kinds.map((k) => k.text))];
  return texts.length > 1 && kinds.every((k) => k.literal) ? `one of ${texts.join(', ')}` : list(texts, 'or');
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const FORMAT_NAMES: Readonly<Record<string, string>> = {
  'date-time': 'an RFC 3339 date-time with its offset, e.g. 2026-11-01T00:00:00+08:00',
  date: 'a date, e.g. 2026-11-01',
  time: 'a time with its offset, e.g. 08:00:00+08:00',
  uri: 'an absolute URI',
  email: 'an email address',
  uuid: 'a UUID',
};

function formatName(format: string): string {
  return FORMAT_NAMES[format] ?? `a valid ${format}`;
}

/** What a `not` excludes, said as what the value must not be. */
function excluded(schema: unknown): string {
  const s = (schema ?? {}) as { const?: unknown; enum?: unknown[]; required?: unknown[] };
  if ('const' in s) return `must not be ${shown(s.const)}`;
  if (Array.isArray(s.enum)) return `must not be ${alternatives(s.enum.map(literal))}`;
  if (Array.isArray(s.required)) return `must not have ${list(s.required.map(String), 'or')}`;
  return 'has a form that is not accepted here';
}

/** The properties a `required` error's object lacks: all of the list, not only the first. */
function missingOf(error: ErrorObject): string[] {
  const required = Array.isArray(error.schema) ? (error.schema as unknown[]).map(String) : [String((error.params as { missingProperty: unknown }).missingProperty)];
  const value = error.data;
  return value !== null && typeof value === 'object' ? required.filter((p) => !Object.hasOwn(value, p)) : required;
}

/** The values a property's schema allows, when it lists them (`enum`, `const`). */
function valuesOf(schema: unknown): unknown[] {
  if (schema === null || typeof schema !== 'object') return [];
  const s = schema as { enum?: unknown[]; const?: unknown };
  if (Array.isArray(s.enum)) return s.enum;
  return 'const' in s ? [s.const] : [];
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function list(items: readonly string[], conjunction: 'and' | 'or'): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} ${conjunction} ${items[items.length - 1]}`;
}

function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

/**
 * A field (field-name.ts) from ajv's JSON pointer and, for a missing or unknown member, its name.
 * Whether a step is a position is read from the value, as in `{"0": …}` it is a member's name.
 */
function fieldOf(pointer: string, extra: readonly string[], data: unknown): string {
  const segments = pointer === '' ? [] : pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const steps: (string | number)[] = [];
  let value = data;
  for (const segment of [...segments, ...extra]) {
    steps.push(Array.isArray(value) ? Number(segment) : segment);
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[segment] : undefined;
  }
  return fieldName(steps);
}
