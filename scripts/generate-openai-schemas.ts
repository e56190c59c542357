/**
 * `npm run openai:schemas`: writes src/openai/request-schemas.generated.ts, the request schemas of
 * OpenAI's chat completions and Responses, from OpenAI's official OpenAPI document (kept beside the
 * repository in ../shared/openai-openapi/, never shipped). The gateway validates with the module,
 * never with the document: run this again when the document changes, and commit the result
 * (test/unit/openai-request-schemas.test.ts fails while the two disagree).
 *
 * Usage: npm run openai:schemas [-- path/to/openapi.json]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
export const DEFAULT_SOURCE = path.join(ROOT, '..', 'shared', 'openai-openapi', 'openapi.json');
export const GENERATED_PATH = path.join(ROOT, 'src', 'openai', 'request-schemas.generated.ts');

/** The request bodies the gateway takes from OpenAI's API, by the export their field list gets. */
export const ROOTS = { CHAT_REQUEST_FIELDS: 'CreateChatCompletionRequest', RESPONSES_REQUEST_FIELDS: 'CreateResponse' } as const;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const REF_PREFIX = '#/components/schemas/';

/** Keywords that validate, kept as they are (their members walked as schemas where they hold schemas). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties']);
const SCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf']);
const SUBSCHEMAS = new Set(['items', 'additionalProperties', 'propertyNames', 'not']);
const VALUES = new Set([
  'type', 'enum', 'const', 'required', 'format', 'pattern',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties',
]);
/**
 * Annotations, dropped: they validate nothing, and ajv in strict mode refuses the ones it does not
 * know. `default` is dropped too: the gateway's ajv fills defaults in (useDefaults), which would
 * forward OpenAI's defaults upstream for fields the client never sent.
 */
const ANNOTATIONS = new Set(['description', 'title', 'example', 'examples', 'deprecated', 'default', 'discriminator', 'readOnly', 'writeOnly', 'externalDocs', '$comment', '$recursiveAnchor']);

function isObject(node: Json | undefined): node is JsonObject {
  return node !== null && typeof node === 'object' && !Array.isArray(node);
}

function refName(ref: string): string {
  if (!ref.startsWith(REF_PREFIX)) throw new Error(`unexpected $ref ${ref}`);
  return ref.slice(REF_PREFIX.length);
}

/**
 * One schema made fit for the gateway's ajv (draft-07, strict): annotations dropped; OpenAPI 3.0's
 * `nullable: true` as a null alternative; a `oneOf` with a `discriminator` as an `anyOf` (the
 * discriminator picks the form, so a value two forms fit is not refused: OpenAI's API takes a
 * Responses input message without `type`, which fits both EasyInputMessage and InputMessage); `$recursiveRef: "#"` as a $ref to the schema that declares
 * the `$recursiveAnchor` (the document is one resource, so "#" would otherwise be the document);
 * the `unixtime` format (seconds since the epoch) as a whole number of at least 0.
 */
function normalise(node: Json, anchor: string): Json {
  if (typeof node === 'boolean') return node;
  if (!isObject(node)) throw new Error(`not a schema: ${JSON.stringify(node)}`);
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (ANNOTATIONS.has(key) || key.startsWith('x-') || key === 'nullable') continue;
    if (key === '$ref') out.$ref = `${REF_PREFIX}${refName(String(value))}`;
    else if (key === '$recursiveRef') {
      if (value !== '#') throw new Error(`unexpected $recursiveRef ${JSON.stringify(value)}`);
      out.$ref = `${REF_PREFIX}${anchor}`;
    } else if (key === 'format' && value === 'unixtime') out.minimum = 0;
    else if (SCHEMA_MAPS.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, normalise(schema, anchor)]));
    else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) out[key === 'oneOf' && isObject(node.discriminator) ? 'anyOf' : key] = value.map((schema) => normalise(schema, anchor));
    else if (SUBSCHEMAS.has(key)) out[key] = normalise(value, anchor);
    else if (VALUES.has(key)) out[key] = value;
    else throw new Error(`a keyword the generator does not know: ${key}`);
  }
  if (node.format === 'unixtime' && out.type !== 'integer') throw new Error('the unixtime format on a type other than integer');
  return node.nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

/**
 * Where OpenAI's API takes what its document refuses, the generated schema follows the API: each
 * entry names a schema, the members its `required` lists that the API does not require, and why.
 * test/unit/openai-request-schemas.test.ts shows the document refusing each one.
 */
export const API_DEVIATIONS: Readonly<Record<string, { readonly optional: readonly string[]; readonly why: string }>> = {
  FunctionTool: {
    optional: ['strict'],
    why: "OpenAI's API takes a Responses function tool without `strict` (it then defaults it), as the AI SDK 6 Responses provider sends one",
  },
  InputImageContent: {
    optional: ['detail'],
    why: "OpenAI's API takes a Responses image part without `detail` (it then defaults it to auto), as the AI SDK 6 Responses provider sends one",
  },
};

/** `schema` with the deviations API_DEVIATIONS lists for `name`. */
function followingTheApi(name: string, schema: Json): Json {
  const deviation = API_DEVIATIONS[name];
  if (!deviation) return schema;
  if (!isObject(schema) || !Array.isArray(schema.required)) throw new Error(`${name} has no required list to relax`);
  const missing = deviation.optional.filter((member) => !(schema.required as Json[]).includes(member));
  if (missing.length > 0) throw new Error(`${name} does not require ${missing.join(', ')}: its deviation is stale`);
  return { ...schema, required: schema.required.filter((member) => !deviation.optional.includes(String(member))) };
}

/** The names of the schemas `name` reaches through $ref and $recursiveRef, itself included. */
function closure(schemas: Record<string, Json>, roots: readonly string[]): string[] {
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    if (!(name in schemas)) throw new Error(`the document has no component schema ${name}`);
    seen.add(name);
    const walk = (node: Json): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (isObject(node)) for (const [key, value] of Object.entries(node)) key === '$ref' ? visit(refName(String(value))) : walk(value);
    };
    walk(schemas[name]!);
  };
  roots.forEach(visit);
  return [...seen].sort();
}

/** The top-level members a request schema defines, through its allOf and $refs. */
function fieldsOf(schemas: Record<string, JsonObject>, schema: JsonObject): string[] {
  const fields = new Set(Object.keys(isObject(schema.properties) ? schema.properties : {}));
  const parts = [...(Array.isArray(schema.allOf) ? schema.allOf : []), ...(typeof schema.$ref === 'string' ? [{ $ref: schema.$ref }] : [])];
  for (const part of parts) {
    if (!isObject(part)) continue;
    const target = typeof part.$ref === 'string' ? schemas[refName(part.$ref)]! : part;
    for (const field of fieldsOf(schemas, target)) fields.add(field);
  }
  return [...fields].sort();
}

/** The pinned commit the document's README names. */
function sourceCommit(readme: string): string {
  const commit = /commit ([0-9a-f]{40})/.exec(readme)?.[1];
  if (!commit) throw new Error('the README beside the document names no commit');
  return commit;
}

export interface Source {
  readonly document: string;
  readonly readme: string;
  readonly license: string;
}

export function readSource(documentPath = DEFAULT_SOURCE): Source {
  const dir = path.dirname(documentPath);
  return { document: readFileSync(documentPath, 'utf8'), readme: readFileSync(path.join(dir, 'README.md'), 'utf8'), license: readFileSync(path.join(dir, 'LICENSE'), 'utf8') };
}

/** The module's text: deterministic, so a regeneration from the same document is the same bytes. */
export function generateRequestSchemaModule(source: Source): string {
  const document = JSON.parse(source.document) as { components: { schemas: Record<string, JsonObject> } };
  const schemas = document.components.schemas;
  const names = closure(schemas, Object.values(ROOTS));
  const anchors = names.filter((name) => schemas[name]!.$recursiveAnchor === true);
  if (anchors.length > 1) throw new Error(`more than one $recursiveAnchor: ${anchors.join(', ')}`);
  const normalised = names.map((name) => [name, followingTheApi(name, normalise(schemas[name]!, anchors[0] ?? name))] as const);
  const commit = sourceCommit(source.readme);
  const lines = [
    '// Generated by scripts/generate-openai-schemas.ts (`npm run openai:schemas`): do not edit.',
    `// Source: https://github.com/openai/openai-openapi, commit ${commit}, openapi.json,`,
    '// the component schemas CreateChatCompletionRequest and CreateResponse reach, with descriptions',
    "// and other annotations dropped, OpenAPI 3.0's nullable written as a null alternative, and the",
    '// deviations of API_DEVIATIONS (where OpenAI\'s API takes what its document refuses).',
    '// That document is under the MIT licence; its notice:',
    '//',
    ...source.license.trimEnd().split('\n').map((line) => (line ? `// ${line}` : '//')),
    '',
    `export const OPENAI_OPENAPI_COMMIT = '${commit}';`,
    '',
    ...Object.entries(ROOTS).flatMap(([constant, root]) => [
      `/** The top-level fields OpenAI's ${root} defines. */`,
      `export const ${constant}: ReadonlySet<string> = new Set(${JSON.stringify(fieldsOf(schemas, schemas[root]!))});`,
      '',
    ]),
    '/** The component schemas, by their names in OpenAI\'s document; $refs point at `#/components/schemas/<name>`. */',
    'export const OPENAI_REQUEST_SCHEMAS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {',
    ...normalised.map(([name, schema]) => `  ${JSON.stringify(name)}: ${JSON.stringify(schema)},`),
    '};',
    '',
  ];
  return lines.join('\n');
}

if (require.main === module) {
  const source = readSource(process.argv[2] ? path.resolve(process.argv[2]) : DEFAULT_SOURCE);
  writeFileSync(GENERATED_PATH, generateRequestSchemaModule(source));
  console.log(`wrote ${path.relative(ROOT, GENERATED_PATH)}`);
}
