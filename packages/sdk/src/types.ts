// The SDK's public types, taken from the types openapi-typescript generated from the server's
// /v1/openapi.json (src/generated/openapi.ts) by operation, so a change of the API that breaks
// a client breaks this package's typecheck.
import type { components, operations } from './generated/openapi.js';

type Ops = operations;
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

// Internal helpers (not re-exported: generic type-only exports cannot be carried into the
// CommonJS types; `operations` is exported for those who want them).
/** The 200 answer of an operation. */
type ResponseOf<K extends keyof Ops> = Ops[K] extends { responses: { 200: infer R } } ? Json<R> : never;
/** The JSON body of an operation. */
type BodyOf<K extends keyof Ops> = Ops[K] extends { requestBody?: infer R } ? Json<NonNullable<R>> : never;
/** The query parameters of an operation. */
type QueryOf<K extends keyof Ops> = Ops[K] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type Payment = ResponseOf<'getPayment'>;
export type PaymentStatus = Payment['status'];
/** What the buyer must do before a `requires_action` payment is decided (3-D Secure): go to `url`. */
export type PaymentNextAction = NonNullable<Payment['nextAction']>;
/** A manual-capture payment's capture. */
export type PaymentCapture = NonNullable<Payment['capture']>;
export type PaymentListParams = QueryOf<'listPayments'>;

type CreatePaymentBody = BodyOf<'createPayment'>;
// The document describes each request shape as its own component (a oneOf): the SDK offers
// shape B for both methods, and shape A for Pix.
type Schemas = components['schemas'];
/** Shape B, card: `{ amountInCents, method: 'credit_card', cardToken }`. */
export type CardPaymentCreateParams = Schemas['CardPaymentRequest'];
/** Shape B, Pix: `{ amountInCents, method: 'pix' }`. */
export type PixPaymentCreateParams = Schemas['PixPaymentInCentsRequest'];
/** Shape A, Pix: `{ amount, currency, method: 'pix' }` (amount in centavos too). */
export type PixShapeAPaymentCreateParams = Schemas['PixPaymentRequest'];
/** What `payments.create` takes: shape B (card or Pix), or shape A for Pix. */
export type PaymentCreateParams = CardPaymentCreateParams | PixPaymentCreateParams | PixShapeAPaymentCreateParams;
// Checked when this package compiles: every shape the SDK offers is a body the API's document
// accepts (the build breaks if the API stops taking one).
type Fits<T extends true> = T;
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- read by the compiler, which is the check
type PaymentCreateParamsFitTheApi = Fits<PaymentCreateParams extends CreatePaymentBody ? true : false>;

export type Refund = ResponseOf<'getRefund'>;
export type RefundCreateParams = BodyOf<'createRefund'>;
export type RefundListParams = QueryOf<'listRefunds'>;

export type Dispute = ResponseOf<'getDispute'>;
export type DisputeListParams = QueryOf<'listDisputes'>;

export type Recipient = ResponseOf<'getRecipient'>;
export type RecipientCreateParams = BodyOf<'createRecipient'>;
export type RecipientUpdateParams = BodyOf<'updateRecipient'>;
export type RecipientListParams = QueryOf<'listRecipients'>;

export type Receivable = ResponseOf<'getReceivable'>;
export type ReceivableListParams = QueryOf<'listReceivables'>;

export type Settlement = ResponseOf<'getSettlement'>;
export type SettlementListParams = QueryOf<'listSettlements'>;
export type SettlementReceivableListParams = QueryOf<'listSettlementReceivables'>;
export type DailyStatement = ResponseOf<'getDailyStatement'>;
export type DailyStatementParams = QueryOf<'getDailyStatement'>;

export type Balance = ResponseOf<'getBalance'>;

export type WebhookEndpoint = ResponseOf<'getWebhookEndpoint'>;
/** Create and rotate-secret answers carry the `whsec_` secret (shown there only). */
export type WebhookEndpointWithSecret = ResponseOf<'createWebhookEndpoint'> & { secret: string };
export type WebhookEndpointCreateParams = BodyOf<'createWebhookEndpoint'>;
export type WebhookEndpointUpdateParams = BodyOf<'updateWebhookEndpoint'>;
export type WebhookEndpointListParams = QueryOf<'listWebhookEndpoints'>;
export type DeletedWebhookEndpoint = ResponseOf<'deleteWebhookEndpoint'>;
export type WebhookDelivery = ResponseOf<'testWebhookEndpoint'>;
export type WebhookDeliveryListParams = QueryOf<'listWebhookDeliveries'>;

export type Event = ResponseOf<'getEvent'>;
export type EventListParams = QueryOf<'listEvents'>;
export type EventRedeliverParams = BodyOf<'redeliverEvent'>;
export type EventRedeliverResult = ResponseOf<'redeliverEvent'>;

export type CardToken = ResponseOf<'createCardToken'>;
export type CardTokenCreateParams = BodyOf<'createCardToken'>;

export type SandboxAccount = ResponseOf<'createSandboxAccount'>;
export type SandboxAccountCreateParams = BodyOf<'createSandboxAccount'>;

/** The API's error envelope (every non-2xx answer): the document's `ErrorResponse`. */
export type ErrorEnvelope = Schemas['ErrorResponse'];
export type ErrorCode = ErrorEnvelope['error']['code'];
/** One problem of a refused request: the field (`param`) and what is wrong with it. */
export type ErrorDetail = NonNullable<ErrorEnvelope['error']['details']>[number];

export type CheckoutSession = ResponseOf<'getCheckoutSession'>;
export type CheckoutSessionStatus = CheckoutSession['status'];
export type CheckoutMethod = CheckoutSession['methods'][number];
export type CheckoutSessionCreateParams = BodyOf<'createCheckoutSession'>;
export type CheckoutSessionListParams = QueryOf<'listCheckoutSessions'>;
