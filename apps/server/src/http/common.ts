import { Type, type TSchema } from 'typebox';
import { ERROR_CODES } from '../errors.js';

// Shared, named schemas: registered once with the app so they become named components in the
// OpenAPI document and are referenced by `$ref` from routes.
export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Enum(ERROR_CODES as unknown as string[], { description: 'Machine-readable code, UPPER_SNAKE.' }),
        message: Type.String({ description: 'Human-readable explanation. Never contains secrets or card data.' }),
        correlationId: Type.String({ description: 'Quote it to support; also in the X-Correlation-Id header and in our logs.' }),
        param: Type.Optional(Type.String({ description: 'The request field at fault, dotted (e.g. `customer.email`).' })),
        details: Type.Optional(Type.Unknown()),
      },
      { additionalProperties: false },
    ),
  },
  {
    $id: 'Error',
    additionalProperties: false,
    description: 'The envelope of every non-2xx response.',
    examples: [{ error: { code: 'VALIDATION_ERROR', message: 'amount must be a positive integer', correlationId: 'req_01jc6v8x2a9m3yq0d7b4e5f6g8', param: 'amount' } }],
  },
);

export const Metadata = Type.Record(Type.String({ maxLength: 40 }), Type.String({ maxLength: 500 }), {
  $id: 'Metadata',
  maxProperties: 50,
  // TypeBox turns the key schema into a catch-all pattern; the key length needs saying here.
  propertyNames: { maxLength: 40 },
  description: 'Your own key-value pairs: at most 50 keys, keys up to 40 characters, values up to 500.',
  examples: [{ orderId: '1234' }],
});

export const sharedSchemas: TSchema[] = [ErrorEnvelope, Metadata];

export const ref = (id: string, options: Record<string, unknown> = {}) => Type.Unsafe<unknown>({ $ref: id, ...options });

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
      object: Type.Literal('list'),
      data: Type.Array(ref(itemRef)),
      hasMore: Type.Boolean({ description: 'Whether another page follows in this direction.' }),
    },
    { $id: id, additionalProperties: false, description },
  );
}

// The error responses every operation can produce; routes add their own specific ones.
export function errorResponses(...statuses: number[]) {
  const base = [400, 401, 403, 429, 500, ...statuses];
  const out: Record<number, unknown> = {};
  for (const s of new Set(base)) out[s] = ref('Error', { description: ERROR_DESCRIPTIONS[s] ?? 'Error' });
  return out;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'VALIDATION_ERROR: the request is malformed or a field is invalid (`param` names it).',
  401: 'AUTHENTICATION_REQUIRED or INVALID_API_KEY.',
  403: 'PERMISSION_DENIED: wrong kind of key, or live mode not activated.',
  404: 'NOT_FOUND: no such object for this account and mode.',
  409: 'IDEMPOTENCY_KEY_IN_USE (retry after `Retry-After`) or INVALID_STATE.',
  413: 'PAYLOAD_TOO_LARGE.',
  415: 'UNSUPPORTED_MEDIA_TYPE: send `application/json`.',
  422: 'IDEMPOTENCY_KEY_REUSED or UNPROCESSABLE.',
  429: 'RATE_LIMITED: retry after `Retry-After` seconds.',
  500: 'INTERNAL_ERROR: quote the correlation id to support.',
  503: 'SERVICE_UNAVAILABLE or PROVIDER_UNAVAILABLE.',
};
