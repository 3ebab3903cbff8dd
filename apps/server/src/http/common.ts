import { Type, type Static, type TEnum, type TLiteral, type TSchema, type TSchemaOptions } from 'typebox';
import { ERROR_CODES } from '../errors.js';
import { BANK_ACCOUNT_LAYOUT as layout, BANK_ACCOUNT_TYPES } from '../domain/bank-account.js';
import { PIX_KEY_TYPES } from '../domain/pix-key.js';

// Every schema carries its `type`, and a single value is a `const` of that type: code
// generators turn an `enum` of one value into a named enum (and one named `object` does not
// compile in TypeScript), and drop a schema with no type to "any" or abort.
export function stringEnum<const Values extends string[]>(values: readonly [...Values], options: TSchemaOptions = {}): TEnum<Values> {
  return Type.Enum(values, { type: 'string', ...options });
}
// Identifiers for a string enum's values in generated code (`x-enum-varnames`, read by OpenAPI
// Generator and others): `payment.approved` is PAYMENT_APPROVED; a value without letters needs
// a word of its own in `words`.
export function enumVarnames(values: readonly string[], words: Record<string, string> = {}): string[] {
  return values.map((v) => {
    const name = words[v] ?? v.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '').toUpperCase();
    if (!/^[A-Z][A-Z0-9_]*$/.test(name)) throw new Error(`enum value ${JSON.stringify(v)} needs a word for its identifier`);
    return name;
  });
}

// Strings only: a boolean `const` becomes an enum of `true` in generated Java, which does not
// compile (issue 28). A field that is always `false` is a `boolean` that says so.
export function constant<const Value extends string>(value: Value, options: TSchemaOptions = {}): TLiteral<Value> {
  return Type.Literal(value, options);
}

// A boolean that has one value here: typed as that value in TypeScript, a plain `boolean` in
// the document that says which (no boolean `const`: see constant above).
export function always<const Value extends boolean>(value: Value, description = `Always \`${String(value)}\`.`) {
  return Type.Unsafe<Value>(Type.Boolean({ description }));
}

// An object of any keys (a map in generated code): no `properties`, so no class is invented for it.
export const freeForm = (description: string) => Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description });

// Every integer says its width (issue 28): without a `format`, generators pick 32 bits, and a
// balance of 3,000,000,000 centavos no longer parses in a generated Java or C# model. Money and
// counts are `int64`; `int32` only where a `maximum` keeps the value far inside 32 bits (the
// test in test/openapi-generators.test.ts checks both).
export const int64 = (options: TSchemaOptions & { minimum?: number; maximum?: number } = {}) => Type.Integer({ ...options, format: 'int64' });
export const int32 = (options: TSchemaOptions & { minimum?: number; maximum: number }) => Type.Integer({ ...options, format: 'int32' });
// Centavos, in any field.
export const cents = (options: TSchemaOptions & { minimum?: number; maximum?: number } = {}) => int64(options);

// A reference to a named schema that keeps its static type.
export const refTo = <T extends TSchema & { $id?: string }>(schema: T, options: TSchemaOptions = {}) => Type.Unsafe<Static<T>>({ $ref: schema.$id as string, ...options });
// A named schema or null (a nullable reference as OpenAPI 3.1 writes it).
export const nullableRef = <T extends TSchema & { $id?: string }>(schema: T, options: TSchemaOptions = {}) =>
  Type.Unsafe<Static<T> | null>({ anyOf: [{ $ref: schema.$id as string }, { type: 'null' }], ...options });

// Shared, named schemas: registered once with the app so they become named components in the
// OpenAPI document and are referenced by `$ref` from routes.
export const ErrorDetail = Type.Object(
  {
    param: Type.String({ description: 'The field, dotted (as `param`).' }),
    issue: Type.String({ description: 'What is wrong with it: a JSON Schema keyword (`required`, `type`, ...) or a sentence.' }),
  },
  { $id: 'ErrorDetail', additionalProperties: false, description: 'One problem with the request.' },
);

export const ErrorBody = Type.Object(
      {
        code: stringEnum(ERROR_CODES, { description: 'Machine-readable code, UPPER_SNAKE.' }),
        message: Type.String({ description: 'Human-readable explanation. Never contains secrets or card data.' }),
        correlationId: Type.String({ description: 'Quote it to support; also in the X-Correlation-Id header and in our logs.' }),
        param: Type.Optional(Type.String({ description: 'The request field at fault, dotted (e.g. `customer.email`).' })),
        details: Type.Optional(Type.Array(
          refTo(ErrorDetail),
          { description: 'Every problem found, when there are several; the first is in `message` and `param`.' },
        )),
      },
      { $id: 'ErrorBody', additionalProperties: false, description: 'What went wrong (the `error` of every non-2xx answer).' },
);

export const ErrorEnvelope = Type.Object(
  {
    error: refTo(ErrorBody),
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

// What a date-time query parameter takes (app.ts gives the query validator this rule): ISO 8601
// with a time zone, seconds and fraction optional, as Java's OffsetDateTime prints a whole
// minute (`2026-11-28T07:00Z`). RFC 3339, which `format: date-time` names, wants the seconds.
export const DATE_TIME_RULE = 'ISO 8601 with a time zone, seconds optional: `2026-11-28T07:00Z`, `2026-11-28T07:00:00.000Z` or `2026-11-28T04:00-03:00`.';
export const DATE_TIME_QUERY = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;
export function isDateTimeQuery(value: string): boolean {
  const m = DATE_TIME_QUERY.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number);
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > days || hour > 23 || minute > 59 || second > 60) return false;
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return false;
  return !Number.isNaN(Date.parse(value));
}

export const ListQueryBase = {
  limit: Type.Optional(int32({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1-100 (default 20).' })),
  startingAfter: Type.Optional(Type.String({ maxLength: 64, description: 'Cursor: an id from the previous page; returns the objects after it (older).' })),
  endingBefore: Type.Optional(Type.String({ maxLength: 64, description: 'Cursor: an id; returns the objects before it (newer).' })),
  createdGte: Type.Optional(Type.String({ format: 'date-time', description: `Only objects created at or after this instant. ${DATE_TIME_RULE}` })),
  createdLte: Type.Optional(Type.String({ format: 'date-time', description: `Only objects created at or before this instant. ${DATE_TIME_RULE}` })),
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

// A Pix key as the Banco Central's DICT defines it; payouts prefer it to the bank account.
export const PixKey = Type.Object(
  {
    type: stringEnum(PIX_KEY_TYPES, { description: '`cpf`, `cnpj`, `email`, `phone` (E.164, +55) or `evp` (the random key).' }),
    key: Type.String({ minLength: 1, maxLength: 77, description: 'The key: a CPF (11 digits) or CNPJ (14 characters; punctuation ignored, check digits verified), an e-mail (at most 77 characters, stored lowercase), a phone as +55, area code and number, or a UUID (stored lowercase).', examples: ['+5511987654321'] }),
  },
  { $id: 'PixKey', additionalProperties: false, description: 'A Pix key (chave Pix), validated as the Banco Central defines each type.', examples: [{ type: 'cnpj', key: '11222333000181' }] },
);

export const sharedSchemas: TSchema[] = [ErrorDetail, ErrorBody, ErrorEnvelope, Metadata, BankAccount, PixKey];
