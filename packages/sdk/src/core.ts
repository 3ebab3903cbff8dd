import { ConnectionError, errorClassFor, PagamentosError, RequestAbortedError, TimeoutError } from './errors.js';
import type { ListParams, PagePromise } from './pagination.js';
import type { ErrorDetail } from './types.js';

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** Options of one call; each overrides the client's. */
export interface RequestOptions {
  /** Sent as Idempotency-Key (POST, PATCH, DELETE). Default: a random one, reused by every retry of this call. */
  idempotencyKey?: string;
  /** Per attempt. Default: the client's (80 000). */
  timeoutMs?: number;
  /** Retries after the first attempt. Default: the client's (2). */
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

export interface Transport {
  baseUrl: string;
  apiKey: string | null;
  timeoutMs: number;
  maxRetries: number;
  fetch: Fetch;
}

export const MAX_RETRY_AFTER_MS = 60_000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 8_000;

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

// Exponential backoff from 0.5 s doubling to 8 s, with up to 25 % jitter below (never under 0.5 s).
export function backoffMs(retry: number): number {
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** retry);
  return Math.max(BACKOFF_MIN_MS, ceiling * (1 - Math.random() * 0.25));
}

// How long to wait before retrying an error answer, or undefined when it is not retried:
// 409 IDEMPOTENCY_KEY_IN_USE, 429 and 500/502/503/504 are; Retry-After is honoured up to 60 s
// (a longer one is not retried: the caller decides); no other 4xx ever is.
export function retryDelayMs(status: number, code: string, headers: Headers, retry: number): number | undefined {
  const retryable = status === 409 ? code === 'IDEMPOTENCY_KEY_IN_USE' : status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
  if (!retryable) return undefined;
  const after = retryAfterMs(headers);
  if (after === undefined) return backoffMs(retry);
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
      waitMs = backoffMs(retry);
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
      waitMs = retryDelayMs(response.status, error.code, response.headers, retry);
    }
    if (waitMs === undefined || retry >= maxRetries) throw error;
    await sleep(waitMs, signal).catch(() => {
      throw aborted(signal!, idempotencyKey);
    });
  }
}
