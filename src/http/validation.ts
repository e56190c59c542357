import Ajv, { type FormatDefinition, type JSONSchemaType, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { ApiError } from './errors';
import { refusalOf } from './validation-messages';

/**
 * One ajv instance for every request schema. `useDefaults` fills documented defaults in place;
 * additional properties are rejected by each schema that lists its fields exhaustively. Errors
 * carry their schema and value (`verbose`), from which a refusal is written (validation-messages.ts).
 */
export const ajv = new Ajv({ allErrors: false, useDefaults: true, coerceTypes: false, strict: true, strictRequired: false, verbose: true });
addFormats(ajv);
/**
 * An instant is one a JavaScript Date can hold: RFC 3339 also allows a leap second (23:59:60),
 * which Date cannot, and every handler turns the instants it is given into Dates.
 */
const rfc3339DateTime = fullFormats['date-time'] as FormatDefinition<string> & { validate: (text: string) => boolean };
ajv.addFormat('date-time', { ...rfc3339DateTime, validate: (text: string) => rfc3339DateTime.validate(text) && !Number.isNaN(Date.parse(text)) });
/**
 * A schema's `components` holds the schemas its `$ref`s name as `#/components/schemas/<name>`, as
 * in an OpenAPI document (withComponents): the request schemas generated from OpenAI's document
 * keep its references, so the gateway's own document publishes them unchanged.
 */
ajv.addVocabulary(['components']);

/** `schema`, compiled with `schemas` as the targets of its `#/components/schemas/<name>` references. */
export function withComponents(schema: Readonly<Record<string, unknown>>, schemas: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return { ...schema, components: { schemas } };
}

export type { JSONSchemaType };

/** Every schema given to compiledOnFirstUse, for compileEverySchema. */
const firstUses: (() => unknown)[] = [];

/**
 * A schema's check, compiled when first called rather than when its module loads: compiling every
 * request schema at load was about a fifth of the CPU a gateway process spends starting (each CLI
 * and each test gateway process pays it), and most processes use few of them.
 */
export function compiledOnFirstUse<T>(schema: JSONSchemaType<T> | Record<string, unknown>): () => ValidateFunction<T> {
  let compiled: ValidateFunction<T> | undefined;
  const compile = () => (compiled ??= ajv.compile(schema) as ValidateFunction<T>);
  firstUses.push(compile);
  return compile;
}

/**
 * Compiles every schema of the modules loaded so far, so a schema that strict mode refuses fails a
 * test (test/unit/request-schemas.test.ts) instead of a request. Returns their checks.
 */
export function compileEverySchema(): unknown[] {
  return firstUses.map((compile) => compile());
}

/**
 * Compiles a schema on first use; the returned function validates a body or throws a 400 whose
 * `param` and message name the field (every endpoint's one source of such messages).
 */
export function validator<T>(schema: JSONSchemaType<T> | Record<string, unknown>): (body: unknown) => T {
  const compiled = compiledOnFirstUse(schema);
  return (body: unknown): T => {
    const validate = compiled();
    if (validate(body)) return body;
    const { param, message } = refusalOf(validate.errors!, body);
    throw new ApiError(400, 'invalid_request', message, { param });
  };
}
