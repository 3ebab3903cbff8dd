import { APIPromise, checkInteger, checkTimeoutAndRetries, MAX_TIMEOUT_MS, send, type Fetch, type RequestOptions, type RequestSpec, type Requester, type Transport } from './core.js';
import { AuthenticationError } from './errors.js';
import { PagePromise, type ListParams } from './pagination.js';
import { Balance } from './resources/balance.js';
import { CheckoutSessions } from './resources/checkout-sessions.js';
import { Events } from './resources/events.js';
import { Payments } from './resources/payments.js';
import { Receivables } from './resources/receivables.js';
import { Recipients } from './resources/recipients.js';
import { Refunds } from './resources/refunds.js';
import { Disputes } from './resources/disputes.js';
import { Sandbox } from './resources/sandbox.js';
import { Settlements } from './resources/settlements.js';
import { Tokens } from './resources/tokens.js';
import { WebhookEndpoints } from './resources/webhook-endpoints.js';
import { Webhooks } from './webhooks.js';
import type { SandboxAccountCreateParams } from './types.js';

export interface ClientOptions {
  /** Your instance's URL. Default http://localhost:3000 (what `npm start` runs); required with a live key. */
  baseUrl?: string;
  /** Per attempt, in ms: an integer from 1 to 2 147 483 647 (setTimeout's limit). Default 80 000. */
  timeoutMs?: number;
  /** Retries after the first attempt (connection errors, timeouts, 409 IDEMPOTENCY_KEY_IN_USE, 429, 500/502/503/504): 0 to 10. Default 2. */
  maxRetries?: number;
  /** The shortest wait before a retry, in ms; the waits double from it, with jitter. Default 500. */
  minRetryDelayMs?: number;
  /** The longest wait before a retry, in ms (a Retry-After from the API, up to 60 s, wins). Default 8 000. */
  maxRetryDelayMs?: number;
  /** The fetch to use. Default: the runtime's global fetch. */
  fetch?: Fetch;
}

export const DEFAULT_BASE_URL = 'http://localhost:3000';
export const DEFAULT_TIMEOUT_MS = 80_000;
export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_MIN_RETRY_DELAY_MS = 500;
export const DEFAULT_MAX_RETRY_DELAY_MS = 8_000;

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;

function transport(apiKey: string | null, options: ClientOptions): Transport {
  const fetchFn = options.fetch ?? (globalThis.fetch ? globalThis.fetch.bind(globalThis) : undefined);
  if (!fetchFn) throw new TypeError('No fetch in this runtime: pass options.fetch.');
  const baseUrl = new URL(options.baseUrl ?? DEFAULT_BASE_URL).href.replace(/\/+$/, '');
  checkTimeoutAndRetries(options);
  checkInteger('minRetryDelayMs', options.minRetryDelayMs, 0, MAX_TIMEOUT_MS);
  checkInteger('maxRetryDelayMs', options.maxRetryDelayMs, 0, MAX_TIMEOUT_MS);
  const minRetryDelayMs = options.minRetryDelayMs ?? DEFAULT_MIN_RETRY_DELAY_MS;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;
  if (minRetryDelayMs > maxRetryDelayMs) throw new TypeError(`minRetryDelayMs (${minRetryDelayMs}) is over maxRetryDelayMs (${maxRetryDelayMs}).`);
  return {
    apiKey, baseUrl, fetch: fetchFn, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES, minRetryDelayMs, maxRetryDelayMs,
  };
}

/**
 * The Pagamentos API client: `new Pagamentos('sk_test_...', { baseUrl })`. Resources are its
 * properties (`payments`, `refunds`, ...); every call returns a promise of the object, with
 * `.withResponse()` for the status, headers and correlation id.
 */
export class Pagamentos implements Requester {
  /** `test` with an `sk_test_` key (sandbox), `live` with `sk_live_`. */
  readonly mode: 'test' | 'live';
  readonly livemode: boolean;
  readonly baseUrl: string;
  /** What each call gets unless it says otherwise (the defaults, or the options given). */
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly minRetryDelayMs: number;
  readonly maxRetryDelayMs: number;
  readonly #transport: Transport;

  readonly payments: Payments = new Payments(this);
  readonly refunds: Refunds = new Refunds(this);
  /** Card chargebacks and Pix MED returns (read-only). */
  readonly disputes: Disputes = new Disputes(this);
  readonly recipients: Recipients = new Recipients(this);
  readonly receivables: Receivables = new Receivables(this);
  readonly settlements: Settlements = new Settlements(this);
  readonly balance: Balance = new Balance(this);
  readonly checkoutSessions: CheckoutSessions = new CheckoutSessions(this);
  readonly webhookEndpoints: WebhookEndpoints = new WebhookEndpoints(this);
  readonly events: Events = new Events(this);
  /** Card tokens (normally made in the browser: see the resource's note). */
  readonly tokens: Tokens = new Tokens(this);
  /** Sandbox-only helpers: pay a Pix, create a sandbox account. */
  readonly sandbox: Sandbox = new Sandbox(this);
  /** Webhook verification and signing (also exported as verifyWebhook / signWebhook). */
  readonly webhooks: Webhooks = new Webhooks();

  constructor(apiKey: string, options: ClientOptions = {}) {
    const mode = typeof apiKey === 'string' ? /^sk_(test|live)_./.exec(apiKey)?.[1] : undefined;
    if (!mode) {
      throw new AuthenticationError({
        code: 'API_KEY_REQUIRED',
        message: typeof apiKey === 'string' && /^pk_/.test(apiKey)
          ? 'This is a publishable key (pk_): the SDK needs your secret key (sk_test_... or sk_live_...), on the server only.'
          : 'Pagamentos needs a secret key: new Pagamentos("sk_test_..." or "sk_live_...").',
      });
    }
    const t = transport(apiKey, options);
    if (mode === 'live') {
      const host = new URL(t.baseUrl).hostname;
      if (options.baseUrl === undefined) throw new TypeError('A live key needs an explicit baseUrl (your production instance).');
      if (new URL(t.baseUrl).protocol !== 'https:' && !LOOPBACK.test(host)) throw new TypeError('A live key is only sent over https.');
    }
    this.mode = mode as 'test' | 'live';
    this.livemode = mode === 'live';
    this.baseUrl = t.baseUrl;
    this.timeoutMs = t.timeoutMs;
    this.maxRetries = t.maxRetries;
    this.minRetryDelayMs = t.minRetryDelayMs;
    this.maxRetryDelayMs = t.maxRetryDelayMs;
    this.#transport = t;
  }

  /** @internal What resources call. */
  request<T>(spec: RequestSpec, options?: RequestOptions): APIPromise<T> {
    return new APIPromise(send<T>(this.#transport, spec, options));
  }

  /** @internal What resources' list methods call. */
  list<T extends { id: string }, P extends ListParams>(path: string, params: P, options?: RequestOptions): PagePromise<T, P> {
    return new PagePromise<T, P>((query, opts) => send(this.#transport, { method: 'GET', path, query }, opts), params, options);
  }
}

/** A new sandbox merchant account and its keys, without a key of your own. */
export function createSandboxAccount(params: SandboxAccountCreateParams = {}, options: Omit<ClientOptions, 'maxRetries'> & RequestOptions = {}) {
  const t = transport(null, options);
  return new Sandbox({ request: <T>(spec: RequestSpec, o?: RequestOptions) => new APIPromise<T>(send<T>(t, spec, o)) } as Requester).createAccount(params, options);
}
