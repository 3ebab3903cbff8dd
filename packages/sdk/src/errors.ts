// Every failure the SDK reports is a PagamentosError. Each family has its own subclass, so
// `err instanceof RateLimitError` works; `err.code` is the API's machine-readable code (or one
// of the SDK's own for failures that never got an answer: CONNECTION_ERROR, TIMEOUT, ABORTED,
// WEBHOOK_*).
import type { ErrorDetail } from './types.js';

export interface PagamentosErrorInit {
  message: string;
  code: string;
  status?: number;
  correlationId?: string;
  param?: string;
  details?: ErrorDetail[];
  headers?: Headers;
  idempotencyKey?: string;
  cause?: unknown;
}

export class PagamentosError extends Error {
  override name = 'PagamentosError';
  /** HTTP status of the answer; undefined when there was none (connection error, timeout, abort). */
  readonly status: number | undefined;
  /** Machine-readable code, UPPER_SNAKE: the API's `error.code`, or the SDK's own. */
  readonly code: string;
  /** Quote it to support: the API's `error.correlationId` (also the `X-Correlation-Id` header). */
  readonly correlationId: string | undefined;
  /** The request field at fault, dotted (`customer.email`). */
  readonly param: string | undefined;
  /** When the request had several problems: each field (`param`) and what is wrong with it. */
  readonly details: ErrorDetail[] | undefined;
  /** Headers of the answer (Retry-After, RateLimit-*, X-Correlation-Id...). */
  readonly headers: Headers | undefined;
  /** The Idempotency-Key sent (the same on every retry): retry with it and nothing happens twice. */
  readonly idempotencyKey: string | undefined;

  constructor(init: PagamentosErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.correlationId = init.correlationId;
    this.param = init.param;
    this.details = init.details;
    this.headers = init.headers;
    this.idempotencyKey = init.idempotencyKey;
  }
}

/** 400 VALIDATION_ERROR, and the other refusals of the request itself: 405, 413, 415, 422 UNPROCESSABLE. */
export class ValidationError extends PagamentosError {
  override name = 'ValidationError';
}
/** 401: no key, a malformed key, an unknown or revoked key. */
export class AuthenticationError extends PagamentosError {
  override name = 'AuthenticationError';
}
/** 403 PERMISSION_DENIED: wrong kind of key, live mode not activated. */
export class PermissionError extends PagamentosError {
  override name = 'PermissionError';
}
/** 404 NOT_FOUND (also another account's or the other mode's ids). */
export class NotFoundError extends PagamentosError {
  override name = 'NotFoundError';
}
/** 409 INVALID_STATE: the object's state forbids it (cancel an approved payment...). */
export class InvalidStateError extends PagamentosError {
  override name = 'InvalidStateError';
}
/** 409 IDEMPOTENCY_KEY_IN_USE (retried) and 422 IDEMPOTENCY_KEY_REUSED (same key, another request). */
export class IdempotencyError extends PagamentosError {
  override name = 'IdempotencyError';
}
/** 429 RATE_LIMITED, once the retries are spent (or Retry-After is over 60 s). */
export class RateLimitError extends PagamentosError {
  override name = 'RateLimitError';
}
/** 5xx: INTERNAL_ERROR, PROVIDER_UNAVAILABLE, SERVICE_UNAVAILABLE, once the retries are spent. */
export class APIError extends PagamentosError {
  override name = 'APIError';
}
/** No answer: the connection failed or was cut. The request may or may not have been done: retry with `err.idempotencyKey`. */
export class ConnectionError extends PagamentosError {
  override name = 'ConnectionError';
}
/** No answer within `timeoutMs` (each attempt). */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';
}
/** The caller's AbortSignal fired. Never retried. */
export class RequestAbortedError extends PagamentosError {
  override name = 'RequestAbortedError';
}
/** A webhook failed verification: `code` says why (WEBHOOK_RAW_BODY_REQUIRED, WEBHOOK_TIMESTAMP_TOO_OLD...). */
export class WebhookVerificationError extends PagamentosError {
  override name = 'WebhookVerificationError';
}

// The family of an API error answer: by status, with the code deciding within 409 and 422.
export function errorClassFor(status: number, code: string): typeof PagamentosError {
  if (code === 'IDEMPOTENCY_KEY_IN_USE' || code === 'IDEMPOTENCY_KEY_REUSED') return IdempotencyError;
  if (code === 'INVALID_STATE') return InvalidStateError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionError;
  if (status === 404) return NotFoundError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return APIError;
  if (status === 400 || status === 405 || status === 413 || status === 415 || status === 422) return ValidationError;
  return PagamentosError;
}
