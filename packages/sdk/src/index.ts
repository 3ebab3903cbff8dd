// pagamentos: the TypeScript SDK of the Pagamentos API. No dependencies; fetch is the transport.
import { Pagamentos } from './client.js';

export default Pagamentos;
export {
  Pagamentos, createSandboxAccount, DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, DEFAULT_MIN_RETRY_DELAY_MS, DEFAULT_MAX_RETRY_DELAY_MS,
} from './client.js';
export type { ClientOptions } from './client.js';
export { APIPromise, MAX_RETRIES, MAX_TIMEOUT_MS } from './core.js';
export type { Fetch, RequestOptions, ResponseMeta } from './core.js';
export { Page, PagePromise, MAX_AUTO_PAGING_ITEMS } from './pagination.js';
export type { ListParams } from './pagination.js';
export {
  PagamentosError, ValidationError, AuthenticationError, PermissionError, NotFoundError, InvalidStateError, IdempotencyError,
  RateLimitError, APIError, ConnectionError, TimeoutError, RequestAbortedError, WebhookVerificationError,
} from './errors.js';
export type { PagamentosErrorInit } from './errors.js';
export { verifyWebhook, signWebhook, Webhooks, DEFAULT_TOLERANCE_SECONDS } from './webhooks.js';
export type {
  WebhookEvent, WebhookEventType, WebhookPayload, WebhookHeaders, VerifyOptions, SignedWebhookHeaders, PaymentEvent, RefundEvent, DisputeEvent,
  RecipientEvent, ReceivableEvent, SettlementEvent, CheckoutSessionEvent, WebhookEndpointEvent, WebhookTestEvent, WebhookTestObject,
} from './webhooks.js';
export type * from './types.js';
export type { paths, operations, components } from './generated/openapi.js';
