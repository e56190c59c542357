/**
 * A JSON value that satisfies a JSON Schema, for structured outputs and tool arguments: the
 * keywords that OpenAI's strict mode allows and zod, the AI SDK and LangChain emit (type, nullable
 * types, properties, required, additionalProperties, items, prefixItems, enum, const, anyOf,
 * oneOf, allOf, $ref into $defs/definitions, minItems/maxItems, minimum/maximum and their
 * exclusive forms, minLength/maxLength, the common string formats). Deterministic: the same
 * schema gives the same value. Every declared property is filled in (strict mode requires them
 * all); `pattern` and `multipleOf` are not honoured.
 */

type Schema = Record<string, unknown>;

/** Past this depth, a recursive schema takes its null or empty branch so the value stays finite. */
const MAX_DEPTH = 6;

/** Values for the string formats a schema may name; anything else gets a plain word. */
const FORMAT_SAMPLES: Readonly<Record<string, string>> = {
  'date-time': '2025-01-01T00:00:00Z',
  date: '2025-01-01',
  time: '00:00:00Z',
  duration: 'P1D',
  email: 'user@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  uuid: '00000000-0000-4000-8000-000000000000',
};

export function sampleJson(schema: unknown): unknown {
  const root = isSchema(schema) ? schema : {};
  return sample(root, root, '', 0);
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sample(schema: Schema, root: Schema, name: string, depth: number): unknown {
  const ref = schema['$ref'];
  if (typeof ref === 'string') return depth > MAX_DEPTH * 2 ? null : sample(resolve(root, ref), root, name, depth + 1);
  if ('const' in schema) return schema['const'];
  const choices = Array.isArray(schema['enum']) ? schema['enum'] : undefined;
  if (choices && choices.length > 0) return choices[0];
  const variants = schema['anyOf'] ?? schema['oneOf'];
  if (Array.isArray(variants) && variants.length > 0) return sample(pickVariant(variants, depth), root, name, depth);
  if (Array.isArray(schema['allOf'])) return sample(mergeAll(schema), root, name, depth);
  switch (pickType(schema, depth)) {
    case 'null':
      return null;
    case 'boolean':
      return true;
    case 'integer':
      return Math.ceil(numberIn(schema, 1));
    case 'number':
      return numberIn(schema, 0.5);
    case 'string':
      return stringFor(schema, name);
    case 'array':
      return arrayFor(schema, root, name, depth);
    default:
      return objectFor(schema, root, depth);
  }
}

/** `#/$defs/x`, `#/definitions/x` or `#` itself; an unresolvable reference is any value ({}). */
function resolve(root: Schema, ref: string): Schema {
  if (ref === '#') return root;
  let node: unknown = root;
  for (const segment of ref.replace(/^#\//, '').split('/')) {
    node = isSchema(node) ? node[segment.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  }
  return isSchema(node) ? node : {};
}

/** The first variant, or, deep in a recursive schema, a null variant when there is one. */
function pickVariant(variants: readonly unknown[], depth: number): Schema {
  const schemas = variants.filter(isSchema);
  const isNull = (s: Schema): boolean => s['type'] === 'null';
  const preferred = depth >= MAX_DEPTH ? schemas.find(isNull) : schemas.find((s) => !isNull(s));
  return preferred ?? schemas[0] ?? {};
}

function mergeAll(schema: Schema): Schema {
  const { allOf, ...rest } = schema;
  const merged: Schema = { ...rest };
  const properties: Schema = isSchema(rest['properties']) ? { ...rest['properties'] } : {};
  for (const part of Array.isArray(allOf) ? allOf.filter(isSchema) : []) {
    Object.assign(merged, part);
    if (isSchema(part['properties'])) Object.assign(properties, part['properties']);
  }
  delete merged['allOf'];
  return Object.keys(properties).length > 0 ? { ...merged, properties } : merged;
}

/** The schema's type (the first non-null of a list, or null when deep); inferred from its keywords when absent. */
function pickType(schema: Schema, depth: number): string {
  const type = schema['type'];
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) {
    const named = type.filter((t): t is string => typeof t === 'string');
    if (depth >= MAX_DEPTH && named.includes('null')) return 'null';
    return named.find((t) => t !== 'null') ?? 'null';
  }
  if ('items' in schema || 'prefixItems' in schema) return 'array';
  if ('properties' in schema) return 'object';
  return 'object';
}

/** The lowest allowed number at or above 0 where the bounds allow, else the highest allowed. */
function numberIn(schema: Schema, step: number): number {
  const min = numeric(schema['minimum']);
  const exclusiveMin = numeric(schema['exclusiveMinimum']);
  const max = numeric(schema['maximum']);
  const exclusiveMax = numeric(schema['exclusiveMaximum']);
  let value = Math.max(min ?? 0, exclusiveMin === undefined ? -Infinity : exclusiveMin + step);
  if (min === undefined && exclusiveMin === undefined && (max ?? 0) < 0) value = max!;
  if (max !== undefined && value > max) value = max;
  if (exclusiveMax !== undefined && value >= exclusiveMax) value = exclusiveMax - step;
  return value;
}

function numeric(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function stringFor(schema: Schema, name: string): string {
  const format = typeof schema['format'] === 'string' ? FORMAT_SAMPLES[schema['format']] : undefined;
  if (format !== undefined) return format;
  let text = name || 'text';
  const minLength = numeric(schema['minLength']);
  const maxLength = numeric(schema['maxLength']);
  if (minLength !== undefined && text.length < minLength) text = text.padEnd(minLength, 'x');
  if (maxLength !== undefined && text.length > maxLength) text = text.slice(0, maxLength);
  return text;
}

/** `prefixItems` each once, then `items` up to minItems (at least one, unless maxItems forbids). */
function arrayFor(schema: Schema, root: Schema, name: string, depth: number): unknown[] {
  const prefix = Array.isArray(schema['prefixItems']) ? schema['prefixItems'].filter(isSchema) : [];
  const values = prefix.map((item) => sample(item, root, name, depth + 1));
  const items = schema['items'];
  const maxItems = numeric(schema['maxItems']) ?? Infinity;
  const wanted = Math.min(Math.max(numeric(schema['minItems']) ?? 0, depth >= MAX_DEPTH ? 0 : 1), maxItems);
  if (isSchema(items)) while (values.length < wanted) values.push(sample(items, root, name, depth + 1));
  return values;
}

/** Every declared property (strict schemas require them all); no others, whatever additionalProperties says. */
function objectFor(schema: Schema, root: Schema, depth: number): Record<string, unknown> {
  const properties = isSchema(schema['properties']) ? schema['properties'] : {};
  const value: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(properties)) {
    // defineProperty: a property named `__proto__` is data, not the object's prototype.
    if (isSchema(property)) Object.defineProperty(value, key, { value: sample(property, root, key, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return value;
}
