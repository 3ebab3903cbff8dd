import type { Ajv, ValidateFunction } from 'ajv';
import type { TSchema } from 'typebox';
import { ApiError } from '../errors.js';

// Request bodies whose published schema says `oneOf` (the payment shapes, a split share's
// percentage or amount). Ajv's errors for a body that matches no branch list every branch's
// failures, which tell a person nothing, and a oneOf costs every branch on every request (3.4 µs
// against 0.3 µs for a payment, measured). So such a body is validated as two steps that accept
// exactly what the oneOf accepts: its loose twin (every field typed as in the branches, the shape
// rules left out: a precise field error), then the shape rules in code (one sentence saying which
// rule it breaks). test/request-shapes.test.ts checks, over random bodies, that the server accepts
// exactly what the published oneOf does.
export interface ShapeRule {
  // Every field of the body, typed; no oneOf.
  loose: TSchema;
  // The shape rules: throws a VALIDATION_ERROR naming the field.
  check(body: never): unknown;
}

type Validator = ((data: unknown) => boolean | { error: Error }) & { errors?: ValidateFunction['errors'] };

export function compileBody(ajv: Ajv, schema: Record<string, unknown>, rules: Record<string, ShapeRule>): Validator {
  const id = (schema.$ref ?? schema.$id) as string | undefined;
  const rule = id === undefined ? undefined : rules[id];
  if (!rule) return ajv.compile(schema);
  const loose = ajv.compile(rule.loose);
  const fn: Validator = (data) => {
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
    return true;
  };
  return fn;
}
