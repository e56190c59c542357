import Ajv, { type ErrorObject, type FormatDefinition, type JSONSchemaType, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { ApiError } from './errors';

/**
 * One ajv instance for every request schema. `useDefaults` fills documented defaults in place;
 * additional properties are rejected by each schema that lists its fields exhaustively.
 */
export const ajv = new Ajv({ allErrors: false, useDefaults: true, coerceTypes: false, strict: true, strictRequired: false });
addFormats(ajv);
/**
 * An instant is one a JavaScript Date can hold: RFC 3339 also allows a leap second (23:59:60),
 * which Date cannot, and every handler turns the instants it is given into Dates.
 */
const rfc3339DateTime = fullFormats['date-time'] as FormatDefinition<string> & { validate: (text: string) => boolean };
ajv.addFormat('date-time', { ...rfc3339DateTime, validate: (text: string) => rfc3339DateTime.validate(text) && !Number.isNaN(Date.parse(text)) });

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

/** Compiles a schema on first use; the returned function validates a body or throws a 400 naming the field. */
export function validator<T>(schema: JSONSchemaType<T> | Record<string, unknown>): (body: unknown) => T {
  const compiled = compiledOnFirstUse(schema);
  return (body: unknown): T => {
    const validate = compiled();
    if (validate(body)) return body;
    const error = reportedError(validate.errors!);
    const param = fieldOf(error);
    throw new ApiError(400, 'invalid_request', describe(error, param), { param });
  };
}

/**
 * The error a refusal reports: ajv's first, unless that is a type mismatch with one branch of an
 * `anyOf` whose other branch took the value's type and failed on another rule, there or deeper
 * (`input: []` of Responses is too short an array, not a value that "must be string").
 */
function reportedError(errors: readonly ErrorObject[]): ErrorObject {
  const first = errors[0]!;
  if (first.keyword !== 'type') return first;
  return errors.find((e) => e.keyword !== 'type' && e.keyword !== 'anyOf' && e.instancePath.startsWith(first.instancePath)) ?? first;
}

function fieldOf(error: ErrorObject): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') path.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') path.push(String(error.params.additionalProperty));
  return path.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '') || 'body';
}

function describe(error: ErrorObject, param: string): string {
  switch (error.keyword) {
    case 'required':
      return `${param} is required`;
    case 'additionalProperties':
      return `${param} is not a recognised field`;
    case 'enum':
      return `${param} must be one of ${(error.params.allowedValues as unknown[]).map(String).join(', ')}`;
    default:
      return `${param} ${error.message ?? 'is invalid'}`;
  }
}
