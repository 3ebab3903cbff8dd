// One error type for everything the API refuses. The envelope and its HTTP status come from the
// code, so a code can never be answered with two different statuses.
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  AUTHENTICATION_REQUIRED: 401,
  INVALID_API_KEY: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  IDEMPOTENCY_KEY_IN_USE: 409,
  INVALID_STATE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  UNPROCESSABLE: 422,
  RATE_LIMITED: 429,
  REQUEST_HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  PROVIDER_UNAVAILABLE: 503,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly param?: string;
  readonly details?: unknown;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { param?: string; details?: unknown; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.statusCode = ERROR_STATUS[code];
    this.param = options.param;
    this.details = options.details;
    this.headers = options.headers;
  }

  // Errors a retry cannot change: stored for the idempotency key so a replay answers the same.
  // 400s are not stored (the caller corrects and retries with the same key), nor 5xx.
  get storable(): boolean {
    return this.statusCode >= 401 && this.statusCode < 500 && this.statusCode !== 429 && this.code !== 'IDEMPOTENCY_KEY_IN_USE';
  }
}

export const notFound = (what: string, param?: string) => new ApiError('NOT_FOUND', `No such ${what}.`, { param });
export const invalidState = (message: string) => new ApiError('INVALID_STATE', message);
export const validation = (message: string, param?: string, details?: unknown) => new ApiError('VALIDATION_ERROR', message, { param, details });

export interface ErrorEnvelope {
  error: { code: string; message: string; correlationId: string; param?: string; details?: unknown };
}

// The one serializer of the envelope: the error handler, stored idempotent responses and tests
// all go through it, so the bytes are the same wherever an error is produced.
export function errorBody(err: ApiError, correlationId: string): string {
  const error: ErrorEnvelope['error'] = { code: err.code, message: err.message, correlationId };
  if (err.param !== undefined) error.param = err.param;
  if (err.details !== undefined) error.details = err.details;
  return JSON.stringify({ error });
}

// A stored idempotent response to send as it is (another process finished the same key first).
export class StoredResponse extends Error {
  constructor(readonly statusCode: number, readonly body: string) {
    super('stored idempotent response');
  }
}
