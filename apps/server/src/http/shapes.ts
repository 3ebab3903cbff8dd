import type { Ajv, ValidateFunction } from 'ajv';
import type { TSchema } from 'typebox';
import { ApiError } from '../errors.js';

// Request bodies whose schema says `oneOf` (the payment shapes, a split share's percentage or
// amount) are validated against that schema, so the document and the validation are one. When a
// body matches no branch, Ajv's errors list every branch's failures, which tell a person
// nothing. Such a body is then checked against its loose twin (every field typed, the shape
// rules left out) for a precise field error, and if it passes, by the shape rules in code, which
// say in one sentence what is wrong. A test checks that the loose twin and the rules together
// accept exactly what the oneOf does.
export interface ShapeRule {
  // Every field of the body, typed; no oneOf.
  loose: TSchema;
  // The shape rules: throws a VALIDATION_ERROR naming the field.
  check(body: never): unknown;
}

type Validator = ((data: unknown) => boolean | { error: Error }) & { errors?: ValidateFunction['errors'] };

export function compileBody(ajv: Ajv, schema: Record<string, unknown>, rules: Record<string, ShapeRule>): Validator {
  const validate = ajv.compile(schema);
  const id = (schema.$ref ?? schema.$id) as string | undefined;
  const rule = id === undefined ? undefined : rules[id];
  if (!rule) return validate;
  const loose = ajv.compile(rule.loose);
  const fn: Validator = (data) => {
    if (validate(data)) return true;
    if (!loose(data)) {
      fn.errors = loose.errors;
      return false;
    }
    try {
      rule.check(data as never);
    } catch (error) {
      if (error instanceof ApiError) return { error };
      throw error;
    }
    // The rules in code and the schema disagree: refuse, as the schema does.
    return { error: new ApiError('VALIDATION_ERROR', 'The body matches none of the accepted shapes; see the API reference.') };
  };
  return fn;
}
