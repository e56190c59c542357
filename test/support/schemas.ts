import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'chai';

export const ajv = new Ajv({ allErrors: true, strict: true });
addFormats(ajv);

/** A failed task's `error`: a message. */
export const ERROR_MESSAGE = { type: 'string', minLength: 1 };

export function expectValid(validate: ValidateFunction, body: unknown, what: string): void {
  expect(validate(body), `${what}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body)}`).to.equal(true);
}

/**
 * One schema per status of a task read: the `common` members and `status` (that status) in every
 * one, plus the members `extra` lists for the status, all required; nothing else.
 */
export function statusSchemas<S extends string>(
  common: { properties: Record<string, object>; required: string[] },
  extra: Record<S, Record<string, object>>,
): Record<S, ValidateFunction> {
  const schemas = {} as Record<S, ValidateFunction>;
  for (const status of Object.keys(extra) as S[]) {
    schemas[status] = ajv.compile({
      type: 'object',
      properties: { ...common.properties, status: { const: status }, ...extra[status] },
      required: [...common.required, ...Object.keys(extra[status])],
      additionalProperties: false,
    });
  }
  return schemas;
}

/** Expects a task read to be valid against the schema of its status (a status without one fails). */
export function expectValidForStatus(schemas: Record<string, ValidateFunction>, body: any, what: string): void {
  expect(Object.hasOwn(schemas, body?.status), `${what}: unknown status ${body?.status}`).to.equal(true);
  expectValid(schemas[body.status]!, body, what);
}
