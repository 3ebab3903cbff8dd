import { ConnectionError, errorClassFor, PagamentosError, RequestAbortedError, TimeoutError } from './errors.js';
import type { ListParams, PagePromise } from './pagination.js';
import type { ErrorDetail } from './types.js';

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** Options of one call; each overrides the client's. */
export interface RequestOptions {
  /** Sent as Idempotency-Key (POST, PATCH, DELETE). Default: a random one, reused by every retry of this call. */
  idempotencyKey?: string;
  /** Per attempt, in ms: an integer from 1 to 2 147 483 647. Default: the client's (80 000). */
  timeoutMs?: number;
  /** Retries after the first attempt: an integer from 0 to 10. Default: the client's (2). */
  maxRetries?: number;
  /** Aborts the call (and its retries) with a RequestAbortedError. */
  signal?: AbortSignal;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

/** What came with an answer, from `.withResponse()`. */
export interface ResponseMeta {
  status: number;
  headers: Headers;
  /** X-Correlation-Id: quote it to support. */
  correlationId: string | undefined;
  /** True when the API returned the stored answer of an earlier request with the same Idempotency-Key. */
  idempotentReplayed: boolean;
  /** The Idempotency-Key sent, if any. */
  idempotencyKey: string | undefined;
  /** Attempts made, retries included (1 when the first one answered). */
  attempts: number;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: object;
  body?: object;
  // Routes that take no key and no Idempotency-Key (sandbox sign-up): neither is sent, and
  // nothing is retried unless the caller asks.
  anonymous?: true;
}

/** What resources call: the client. */
export interface Requester {
  request<T>(spec: RequestSpec, options?: RequestOptions): APIPromise<T>;
  list<T extends { id: string }, P extends ListParams>(path: string, params: P, options?: RequestOptions): PagePromise<T, P>;
}

/** Base of the resources: holds the client without showing it (console.log, JSON). */
export class APIResource {
  protected declare readonly client: Requester;
  constructor(client: Requester) {
    Object.defineProperty(this, 'client', { value: client });
  }
}

// A path segment from an id: a non-empty string, encoded. An empty id would otherwise turn
// `/v1/payments/` into the list route.
export function segment(id: string): string {
  if (typeof id !== 'string' || id === '') throw new TypeError(`Expected an id (a non-empty string), got ${id === '' ? 'an empty string' : typeof id}.`);
  return encodeURIComponent(id);
}

/** The bounds of the exponential backoff between retries (a Retry-After from the API wins). */
export interface RetryDelays {
  minRetryDelayMs: number;
  maxRetryDelayMs: number;
}

export interface Transport extends RetryDelays {
  baseUrl: string;
  apiKey: string | null;
  timeoutMs: number;
  maxRetries: number;
  fetch: Fetch;
}

export const MAX_RETRY_AFTER_MS = 60_000;
/** setTimeout's ceiling (2^31 - 1 ms, about 24.8 days): a longer delay overflows and fires at once. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;
/** At most this many retries per call: past it a call is stuck, not unlucky (ten 8 s waits already make 80 s). */
export const MAX_RETRIES = 10;

// A number option, given to the client or to one call: an integer within [min, max], else a
// TypeError before anything is sent. Unchecked, timeoutMs 0 times every call out, one over
// MAX_TIMEOUT_MS overflows setTimeout (every call times out at once), and 1.5 retries or -1 ms
// mean nothing anyone meant.
export function checkInteger(name: string, value: unknown, min: number, max: number): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const got = typeof value === 'number' ? String(value) : typeof value;
    throw new TypeError(`${name} must be an integer from ${min} to ${max}, got ${got}.`);
  }
}

// timeoutMs and maxRetries, the client's (constructor) and a call's alike.
export function checkTimeoutAndRetries(options: { timeoutMs?: number; maxRetries?: number }): void {
  checkInteger('timeoutMs', options.timeoutMs, 1, MAX_TIMEOUT_MS);
  checkInteger('maxRetries', options.maxRetries, 0, MAX_RETRIES);
}

/** A promise of the answer's data that also gives the answer's metadata: `await p.withResponse()`. */
export class APIPromise<T> implements Promise<T> {
  readonly [Symbol.toStringTag] = 'APIPromise';
  constructor(private readonly responsePromise: Promise<{ data: T; response: ResponseMeta }>) {}

  /** The data and the answer's metadata (status, headers, correlationId, idempotentReplayed), without a second call. */
  withResponse(): Promise<{ data: T; response: ResponseMeta }> {
    return this.responsePromise;
  }

  then<A = T, B = never>(onfulfilled?: ((value: T) => A | PromiseLike<A>) | null, onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.responsePromise.then((r) => r.data).then(onfulfilled, onrejected);
  }

  catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.then(undefined, onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<T> {
    return this.then().finally(onfinally);
  }
}

function randomKey(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function url(baseUrl: string, path: string, query?: object): string {
  let search = '';
  if (query) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) params.append(k, String(v));
    search = params.toString();
  }
  return baseUrl + path + (search ? '?' + search : '');
}

// Retry-After in seconds or as an HTTP date, in ms; undefined when absent or unreadable.
function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

// Exponential backoff with "equal jitter": retry n (from 0) waits a random time in the upper half
// of min(max, min * 2^(n+1)), never under min. With the defaults (0.5 s, 8 s): 0.5-1 s, 1-2 s,
// 2-4 s, then 4-8 s. Every wait is random, the first included, so clients cut off at the same
// moment do not all come back at the same moment.
export function backoffMs(retry: number, delays: RetryDelays): number {
  const { minRetryDelayMs: min, maxRetryDelayMs: max } = delays;
  const step = Math.min(max, min * 2 ** (retry + 1));
  const low = Math.max(min, step / 2);
  return low + Math.random() * (step - low);
}

// How long to wait before retrying an error answer, or undefined when it is not retried:
// 409 IDEMPOTENCY_KEY_IN_USE, 429 and 500/502/503/504 are; Retry-After is honoured up to 60 s
// (a longer one is not retried: the caller decides); no other 4xx ever is.
export function retryDelayMs(status: number, code: string, headers: Headers, retry: number, delays: RetryDelays): number | undefined {
  const retryable = status === 409 ? code === 'IDEMPOTENCY_KEY_IN_USE' : status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
  if (!retryable) return undefined;
  const after = retryAfterMs(headers);
  if (after === undefined) return backoffMs(retry, delays);
  return after <= MAX_RETRY_AFTER_MS ? after : undefined;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function aborted(signal: AbortSignal, idempotencyKey?: string): RequestAbortedError {
  return new RequestAbortedError({ message: 'The request was aborted by its AbortSignal.', code: 'ABORTED', cause: signal.reason, idempotencyKey });
}

function apiError(response: Response, text: string, idempotencyKey: string | undefined): PagamentosError {
  let envelope: { code?: unknown; message?: unknown; correlationId?: unknown; param?: unknown; details?: unknown } | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: typeof envelope };
    if (parsed && typeof parsed.error === 'object' && parsed.error) envelope = parsed.error;
  } catch {
    // Not our envelope (a proxy's page): described by its status below.
  }
  const code = typeof envelope?.code === 'string' ? envelope.code : `HTTP_${response.status}`;
  const Family = errorClassFor(response.status, code);
  return new Family({
    status: response.status,
    code,
    message: typeof envelope?.message === 'string' ? envelope.message : `HTTP ${response.status} without an error envelope`,
    correlationId: typeof envelope?.correlationId === 'string' ? envelope.correlationId : response.headers.get('x-correlation-id') ?? undefined,
    param: typeof envelope?.param === 'string' ? envelope.param : undefined,
    details: Array.isArray(envelope?.details) ? (envelope.details as ErrorDetail[]) : undefined,
    headers: response.headers,
    idempotencyKey,
  });
}

// One attempt: fetch and read the body, both within timeoutMs, abortable by the caller.
async function attempt(t: Transport, target: string, init: RequestInit, timeoutMs: number, signal: AbortSignal | undefined): Promise<{ response: Response; text: string } | { failure: 'timeout' | 'connection'; cause: unknown }> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const response = await t.fetch(target, { ...init, signal: controller.signal });
    const text = await response.text();
    return { response, text };
  } catch (cause) {
    return { failure: timedOut ? 'timeout' : 'connection', cause };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

export async function send<T>(t: Transport, spec: RequestSpec, options: RequestOptions = {}): Promise<{ data: T; response: ResponseMeta }> {
  checkTimeoutAndRetries(options);
  const { signal } = options;
  // Extra headers by lower-case name, so they replace ours rather than join them (an
  // Idempotency-Key given as a header is the call's key).
  const extra: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) extra[name.toLowerCase()] = value;
  const idempotencyKey = spec.method !== 'GET' && !spec.anonymous ? options.idempotencyKey ?? extra['idempotency-key'] ?? randomKey() : undefined;
  const maxRetries = options.maxRetries ?? (spec.anonymous ? 0 : t.maxRetries);
  const timeoutMs = options.timeoutMs ?? t.timeoutMs;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (t.apiKey && !spec.anonymous) headers.authorization = `Bearer ${t.apiKey}`;
  if (spec.body !== undefined) headers['content-type'] = 'application/json';
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  const init: RequestInit = {
    method: spec.method,
    headers: { ...headers, ...extra, ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }) },
    body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
  };
  const target = url(t.baseUrl, spec.path, spec.query);

  for (let retry = 0; ; retry++) {
    if (signal?.aborted) throw aborted(signal, idempotencyKey);
    const result = await attempt(t, target, init, timeoutMs, signal);
    let error: PagamentosError;
    let waitMs: number | undefined;
    if ('failure' in result) {
      if (signal?.aborted) throw aborted(signal, idempotencyKey);
      const Family = result.failure === 'timeout' ? TimeoutError : ConnectionError;
      const cause = result.cause as { message?: string; cause?: { message?: string } } | undefined;
      const message = result.failure === 'timeout'
        ? `No answer within ${timeoutMs} ms.`
        : `No answer from ${t.baseUrl}: ${[cause?.message, cause?.cause?.message].filter(Boolean).join(': ') || String(result.cause)}.`;
      error = new Family({ message, code: result.failure === 'timeout' ? 'TIMEOUT' : 'CONNECTION_ERROR', cause: result.cause, idempotencyKey });
      waitMs = backoffMs(retry, t);
    } else {
      const { response, text } = result;
      if (response.ok) {
        let data: T;
        try {
          data = JSON.parse(text) as T;
        } catch (cause) {
          throw new PagamentosError({ message: `HTTP ${response.status} with a body that is not JSON.`, code: 'INVALID_RESPONSE', status: response.status, headers: response.headers, idempotencyKey, cause });
        }
        return {
          data,
          response: {
            status: response.status,
            headers: response.headers,
            correlationId: response.headers.get('x-correlation-id') ?? undefined,
            idempotentReplayed: response.headers.get('idempotent-replayed') === 'true',
            idempotencyKey,
            attempts: retry + 1,
          },
        };
      }
      error = apiError(response, text, idempotencyKey);
      waitMs = retryDelayMs(response.status, error.code, response.headers, retry, t);
    }
    if (waitMs === undefined || retry >= maxRetries) throw error;
    await sleep(waitMs, signal).catch(() => {
      throw aborted(signal!, idempotencyKey);
    });
  }
}
