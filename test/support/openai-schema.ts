/**
 * Validates what the gateway answers against OpenAI's official OpenAPI document, kept beside the
 * repository in `../shared/openai-openapi/` (see its README): never shipped, read by tests only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { PACKAGE_ROOT } from '../../src/package-root';
import { API_DEVIATIONS } from '../../scripts/generate-openai-schemas';

export const OPENAI_OPENAPI_PATH = join(PACKAGE_ROOT, '..', 'shared', 'openai-openapi', 'openapi.json');

const DOCUMENT_ID = 'openai-openapi';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** OpenAPI 3.0's `nullable: true`, which the 3.1 document still uses in places, as JSON Schema's null type. */
function withNullTypes(node: Json): Json {
  if (Array.isArray(node)) return node.map(withNullTypes);
  if (node === null || typeof node !== 'object') return node;
  const copy: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) if (key !== 'nullable') copy[key] = withNullTypes(value);
  return node['nullable'] === true ? { anyOf: [copy, { type: 'null' }] } : copy;
}

/**
 * A `oneOf` with OpenAPI's `discriminator` as an `anyOf`: the discriminator picks the form, so a
 * value two forms fit is one OpenAI's API takes (a Responses input message without `type` fits
 * both EasyInputMessage and InputMessage; the AI SDK sends it). The gateway's generated request
 * schemas read the document so (scripts/generate-openai-schemas.ts), and requests are compared
 * with the document read the same way.
 */
function withDiscriminatedAnyOf(node: Json): Json {
  if (Array.isArray(node)) return node.map(withDiscriminatedAnyOf);
  if (node === null || typeof node !== 'object') return node;
  const discriminated = node['discriminator'] !== undefined && node['oneOf'] !== undefined;
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [discriminated && key === 'oneOf' ? 'anyOf' : key, withDiscriminatedAnyOf(value)]));
}

interface Validator {
  readonly ajv: Ajv2020;
  readonly schemaNames: ReadonlySet<string>;
  /** The schema of each Responses stream event, by its `type`. */
  readonly streamEventSchemas: ReadonlyMap<string, string>;
}

/** How the document is read: as it is, or, for requests, with discriminated unions as withDiscriminatedAnyOf has them and the API_DEVIATIONS applied. */
type Reading = 'document' | 'requests';

const loaded = new Map<Reading, Validator>();

function validator(reading: Reading = 'document'): Validator {
  const known = loaded.get(reading);
  if (known) return known;
  const read = withNullTypes(JSON.parse(readFileSync(OPENAI_OPENAPI_PATH, 'utf8')) as Json);
  const document = (reading === 'requests' ? withDiscriminatedAnyOf(read) : read) as {
    components: { schemas: Record<string, { anyOf?: { $ref: string }[]; properties?: { type?: { enum?: string[] } }; required?: string[] }> };
  };
  const schemas = document.components.schemas;
  // Requests are compared with the document as the gateway's generated schemas read it: where
  // OpenAI's API takes what the document refuses, as the API does (API_DEVIATIONS).
  if (reading === 'requests') {
    for (const [name, { optional }] of Object.entries(API_DEVIATIONS)) schemas[name]!.required = schemas[name]!.required!.filter((member) => !optional.includes(member));
  }
  // The document carries OpenAPI's own keywords (discriminator, example, x-…): not strict JSON Schema.
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  ajv.addFormat('unixtime', { type: 'number', validate: (value: number) => Number.isInteger(value) && value >= 0 });
  ajv.addSchema({ $id: DOCUMENT_ID, components: document.components }, DOCUMENT_ID);
  const streamEventSchemas = new Map<string, string>();
  for (const variant of schemas['ResponseStreamEvent']!.anyOf!) {
    const name = variant.$ref.split('/').pop()!;
    for (const type of schemas[name]!.properties?.type?.enum ?? []) streamEventSchemas.set(type, name);
  }
  const made = { ajv, schemaNames: new Set(Object.keys(schemas)), streamEventSchemas };
  loaded.set(reading, made);
  return made;
}

const compiled = new Map<string, ValidateFunction>();

function compile(name: string, reading: Reading = 'document'): ValidateFunction {
  const { ajv, schemaNames } = validator(reading);
  if (!schemaNames.has(name)) throw new Error(`OpenAI's document has no component schema ${name}`);
  let validate = compiled.get(`${reading} ${name}`);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/components/schemas/${name}` });
    compiled.set(`${reading} ${name}`, validate);
  }
  return validate;
}

function describe(errors: readonly ErrorObject[]): string {
  return errors.map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`).join('; ');
}

/** Why `value` is not a valid `name` (a component schema of OpenAI's document), or null when it is. */
export function openAiSchemaErrors(name: string, value: unknown): string | null {
  const validate = compile(name);
  return validate(value) ? null : describe(validate.errors ?? []);
}

/** As openAiSchemaErrors, for a request body: OpenAI's discriminated unions read as withDiscriminatedAnyOf has them. */
export function openAiRequestSchemaErrors(name: string, value: unknown): string | null {
  const validate = compile(name, 'requests');
  return validate(value) ? null : describe(validate.errors ?? []);
}

/** The component schema of a Responses stream event, chosen by its `type` (the union's errors name every variant). */
export function responseStreamEventSchema(type: string): string {
  const name = validator().streamEventSchemas.get(type);
  if (!name) throw new Error(`OpenAI's document has no Responses stream event ${type}`);
  return name;
}

/** Throws, naming the schema, the value and every violation, unless `value` is a valid `name`. */
export function assertOpenAiSchema(name: string, value: unknown, what = name): void {
  const errors = openAiSchemaErrors(name, value);
  if (errors !== null) throw new Error(`${what} does not validate as OpenAI's ${name}: ${errors}\n${JSON.stringify(value)}`);
}

/** A Responses stream event, validated as the variant its `type` names. */
export function assertResponseStreamEvent(event: { readonly type: string; readonly [more: string]: unknown }): void {
  assertOpenAiSchema(responseStreamEventSchema(event.type), event, `the ${event.type} event`);
}

/**
 * A Responses stream event as OpenAI's live API sends it. Where the API and its document disagree,
 * the API is followed: the Response of `response.created` and `response.in_progress` carries
 * `usage: null` (the document's Response has no null usage; the live API and the openai SDK's type
 * have it until the response ends). Only that member of only those events is let through.
 */
export function assertResponseStreamEventAsTheApiSendsIt(event: { readonly type: string; readonly response?: { readonly status?: string; readonly usage?: unknown } }): void {
  const beforeTheEnd = (event.type === 'response.created' || event.type === 'response.in_progress') && event.response?.status === 'in_progress';
  if (beforeTheEnd && event.response!.usage === null) {
    const { usage: _null, ...response } = event.response!;
    assertResponseStreamEvent({ ...event, response });
    return;
  }
  assertResponseStreamEvent(event);
}
