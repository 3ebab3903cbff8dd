import { Type, type Static, type TEnum, type TLiteral, type TSchema, type TSchemaOptions } from 'typebox';
import { ERROR_CODES } from '../errors.js';
import { BANK_ACCOUNT_LAYOUT as layout, BANK_ACCOUNT_TYPES } from '../domain/bank-account.js';

// Every schema carries its `type`, and a single value is a `const` of that type: code
// generators turn an `enum` of one value into a named enum (and one named `object` does not
// compile in TypeScript), and drop a schema with no type to "any" or abort.
export function stringEnum<const Values extends string[]>(values: readonly [...Values], options: TSchemaOptions = {}): TEnum<Values> {
  return Type.Enum(values, { type: 'string', ...options });
}
export function constant<const Value extends string | boolean>(value: Value, options: TSchemaOptions = {}): TLiteral<Value> {
  return Type.Literal(value, options);
}

// Shared, named schemas: registered once with the app so they become named components in the
// OpenAPI document and are referenced by `$ref` from routes.
export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object(
      {
        code: stringEnum(ERROR_CODES, { description: 'Machine-readable code, UPPER_SNAKE.' }),
        message: Type.String({ description: 'Human-readable explanation. Never contains secrets or card data.' }),
        correlationId: Type.String({ description: 'Quote it to support; also in the X-Correlation-Id header and in our logs.' }),
        param: Type.Optional(Type.String({ description: 'The request field at fault, dotted (e.g. `customer.email`).' })),
        details: Type.Optional(Type.Array(
          Type.Object({
            param: Type.String({ description: 'The field, dotted (as `param`).' }),
            issue: Type.String({ description: 'What is wrong with it: a JSON Schema keyword (`required`, `type`, ...) or a sentence.' }),
          }),
          { description: 'Every problem found, when there are several; the first is in `message` and `param`.' },
        )),
      },
      { additionalProperties: false },
    ),
  },
  {
    // Not `Error`: a component named after a language built-in shadows it in generated clients.
    $id: 'ErrorResponse',
    additionalProperties: false,
    description: 'The envelope of every non-2xx response.',
    examples: [{ error: { code: 'VALIDATION_ERROR', message: 'amount must be a positive integer.', correlationId: 'req_01jc6v8x2a9m3yq0d7b4e5f6g8', param: 'amount' } }],
  },
);

export const Metadata = Type.Record(Type.String({ maxLength: 40 }), Type.String({ maxLength: 500 }), {
  $id: 'Metadata',
  maxProperties: 50,
  // TypeBox turns the key schema into a catch-all pattern; the key length needs saying here.
  propertyNames: { type: 'string', maxLength: 40 },
  description: 'Your own key-value pairs: at most 50 keys, keys up to 40 characters, values up to 500.',
  examples: [{ orderId: '1234' }],
});



export const ref = (id: string, options: Record<string, unknown> = {}) => Type.Unsafe<unknown>({ $ref: id, ...options });
// A string with a pattern and the words that say what it wants: a pattern is for machines, the
// error message for people (plugins/errors.ts reads them from here).
export const PATTERN_MESSAGES = new Map<string, string>();
export function patterned(pattern: string, message: string, options: TSchemaOptions & { minLength?: number; maxLength?: number } = {}) {
  PATTERN_MESSAGES.set(pattern, message);
  return Type.String({ ...options, pattern });
}

// A reference to a named schema that keeps its static type.
export const refTo = <T extends TSchema & { $id?: string }>(schema: T) => Type.Unsafe<Static<T>>({ $ref: schema.$id as string });

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x20-\\x7E]+$',
      description: 'Makes the request safe to retry: the same key with the same request returns the stored response (`Idempotent-Replayed: true`). 1-255 printable ASCII characters; kept 24 h.',
    }),
  ),
});

export const ListQueryBase = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1-100 (default 20).' })),
  startingAfter: Type.Optional(Type.String({ maxLength: 64, description: 'Cursor: an id from the previous page; returns the objects after it (older).' })),
  endingBefore: Type.Optional(Type.String({ maxLength: 64, description: 'Cursor: an id; returns the objects before it (newer).' })),
  createdGte: Type.Optional(Type.String({ format: 'date-time', description: 'Only objects created at or after this instant (ISO-8601).' })),
  createdLte: Type.Optional(Type.String({ format: 'date-time', description: 'Only objects created at or before this instant (ISO-8601).' })),
};

export function listOf(itemRef: string, id: string, description = `A page of ${itemRef} objects, newest first.`) {
  return Type.Object(
    {
      object: constant('list'),
      data: Type.Array(ref(itemRef)),
      hasMore: Type.Boolean({ description: 'Whether another page follows in this direction.' }),
    },
    { $id: id, additionalProperties: false, description },
  );
}

// Request and response share the layout, and so do a recipient, a merchant's payout account and
// a settlement's snapshot: one named component.
export const BankAccount = Type.Object(
  {
    bankCode: patterned(layout.bankCode.pattern, layout.bankCode.message, { minLength: 3, maxLength: 3, description: 'Bank code (COMPE), exactly 3 digits.', examples: ['341'] }),
    agency: patterned(layout.agency.pattern, layout.agency.message, { minLength: 1, maxLength: 7, description: 'Branch: 1-5 digits, optionally `-` and a check digit (0-9 or X).', examples: ['0001'] }),
    account: patterned(layout.account.pattern, layout.account.message, { minLength: 3, maxLength: 22, description: 'Account number: 1-20 digits, `-` and a check digit (0-9 or X; lowercase x is stored as X).', examples: ['12345-6'] }),
    accountType: stringEnum([...BANK_ACCOUNT_TYPES], { description: '`checking`, `savings` or `payment` (payment institution account).' }),
  },
  { $id: 'BankAccount', additionalProperties: false, description: 'A Brazilian bank account that payouts are made to.', examples: [{ bankCode: '341', agency: '0001', account: '12345-6', accountType: 'checking' }] },
);

export const sharedSchemas: TSchema[] = [ErrorEnvelope, Metadata, BankAccount];
