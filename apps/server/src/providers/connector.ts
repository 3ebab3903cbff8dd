import type { PixKey } from '../domain/pix-key.js';

// The connector seam (issue 25). A connector is one provider behind one small interface, as a
// hyperswitch connector is a set of request/response transformers behind one trait: the
// service's modules speak only these types, and a connector maps them to its provider's API
// (providers/pix-api/ for the Banco Central's standard API Pix and its dialects). Adding a PSP
// is a folder of its own plus a line in registry.ts; nothing in modules/ changes.
//
// Rules every connector keeps:
// - ids sent to the provider are derived from ours (txid from the payment id, devolução id from
//   the refund id), so a retry is the same object at the provider, never a second one;
// - an answer we did not read back is not trusted: notifications are parsed only into hints
//   (which objects to read again), and a read of the provider's truth decides;
// - a transient failure (timeout, 5xx, dropped connection) is ProviderUnavailable: the outcome
//   is unknown and the same call may be repeated; a definitive refusal is ProviderRejected.

export type ConnectorEnvironment = 'production' | 'homologation';

// What a connector account holds for its connector: settings (no secrets) and, opened only in
// memory when a call needs them, its secrets.
export interface ConnectorSettings {
  // The PSP's API base URL, e.g. https://pix.api.efipay.com.br (Efí) or https://api.psp.example/api/v2.
  baseUrl: string;
  // The OAuth2 token endpoint; default: the dialect's (standard: `${baseUrl}/oauth/token`).
  tokenUrl?: string;
  // The receiver's Pix key (chave) the charges are made to and the webhook is registered on.
  pixKey: string;
  // OAuth2 scopes to ask for (space separated); default: the dialect's.
  scopes?: string;
  // Per-call timeout; default 10 s.
  timeoutMs?: number;
  // Which dialect of the standard the PSP speaks: 'standard' or 'efi' (providers/pix-api/dialects/).
  dialect: 'standard' | 'efi';
}

export interface ConnectorSecrets {
  clientSecret: string;
  // The client certificate and its key for mutual TLS, PEM.
  certificatePem: string;
  privateKeyPem: string;
  // Extra CA certificates to trust for the PSP's server (PEM), for homologation PSPs with a
  // private CA; empty: the system's.
  caPem?: string;
  // The token in our callback URL (the connector account's webhook route).
  webhookToken: string;
}

// A connector account opened for a call: `S`/`X` are its connector's settings and secrets
// (the Pix ones by default; cards: CardSettings and CardSecrets below).
export interface OpenedConnectorAccount<S = ConnectorSettings, X = ConnectorSecrets> {
  id: string;
  connector: string;
  environment: ConnectorEnvironment;
  clientId: string;
  settings: S;
  secrets: X;
}

export type PixChargeStatus = 'active' | 'completed' | 'removed_by_receiver' | 'removed_by_psp';
export type PixReturnStatus = 'processing' | 'returned' | 'not_done';
// The devolução's nature: ORIGINAL/RETIRADA are asked by the receiver (us); MED_* are started by
// the payer's bank.
export type PixReturnNature = 'ORIGINAL' | 'RETIRADA' | 'MED_OPERACIONAL' | 'MED_FRAUDE';

export interface PixReturn {
  id: string; // ours (derived from the refund id) or the PSP's, for a MED
  rtrId: string | null;
  amountCents: number;
  status: PixReturnStatus;
  nature: PixReturnNature;
}

export interface ReceivedPix {
  e2eid: string;
  txid: string | null;
  amountCents: number;
  paidAtIso: string;
  returns: PixReturn[];
}

export interface PixChargeState {
  txid: string;
  status: PixChargeStatus;
  amountCents: number;
  // The payer's "copia e cola" (the PSP's own, or a dynamic BR Code built from `location`).
  copyPaste: string | null;
  location: string | null;
  payments: ReceivedPix[];
}

export interface PixChargeInput {
  txid: string; // 26-35 letters and digits
  amountCents: number;
  expiresInSeconds: number;
  description: string | null;
}

// Hints parsed from a notification: which objects to read again. Never an outcome.
export interface NotificationHints {
  txids: string[];
  e2eids: string[];
}

export interface PixConnector {
  readonly name: string;
  // Credentials work (an OAuth2 token over mutual TLS): for "test connection".
  authenticate(account: OpenedConnectorAccount): Promise<void>;
  createCharge(account: OpenedConnectorAccount, input: PixChargeInput): Promise<PixChargeState>;
  readCharge(account: OpenedConnectorAccount, txid: string): Promise<PixChargeState>;
  // Our expiry: the charge can no longer be paid.
  removeCharge(account: OpenedConnectorAccount, txid: string): Promise<PixChargeState>;
  refund(account: OpenedConnectorAccount, input: { e2eid: string; returnId: string; amountCents: number }): Promise<PixReturn>;
  readRefund(account: OpenedConnectorAccount, e2eid: string, returnId: string): Promise<PixReturn>;
  readReceived(account: OpenedConnectorAccount, e2eid: string): Promise<ReceivedPix>;
  // Pix received in a window, for reconciliation (all pages).
  listReceived(account: OpenedConnectorAccount, window: { fromIso: string; toIso: string }): Promise<ReceivedPix[]>;
  registerWebhook(account: OpenedConnectorAccount, url: string): Promise<void>;
  readWebhook(account: OpenedConnectorAccount): Promise<string | null>;
  parseNotification(body: unknown): NotificationHints;
}

// ---------------------------------------------------------------------------------------------
// Payouts (issue 26). There is no Banco Central standard for *sending* a Pix: a payout connector
// targets a PSP's own API (Efí's `PUT /v3/gn/pix/:idEnvio` first: providers/efi-payout/; Inter's
// `POST /banking/v2/pix` or Banco do Brasil's would each be one more folder). The same rules:
// the payout id is derived from ours (the settlement id), so a retry is the same payout; an
// answer is only believed when read back; notifications are hints.

// Where the money goes: a Pix key, or a bank account addressed by its ISPB, with its holder.
export type PayoutDestination =
  | { kind: 'pix_key'; pixKey: PixKey; holderDocument: string | null }
  | {
      kind: 'bank_account';
      ispb: string;
      agency: string;
      account: string;
      accountType: 'checking' | 'savings' | 'payment';
      holderName: string;
      holderDocument: string; // CNPJ (14) or CPF (11)
    };

export interface PayoutInput {
  payoutId: string; // at most 35 letters and digits, derived from the settlement id
  amountCents: number;
  destination: PayoutDestination;
  description: string | null;
}

export type PayoutStatus = 'processing' | 'paid' | 'failed';

export interface PayoutState {
  payoutId: string;
  e2eid: string | null;
  amountCents: number;
  status: PayoutStatus;
  paidAtIso: string | null;
  // The PSP's reason when it failed (its code and words).
  failureCode: string | null;
  failureReason: string | null;
}

export interface PayoutHints {
  payoutIds: string[];
  e2eids: string[];
}

export interface PayoutConnector {
  readonly name: string;
  // Sends the payout, or finds it sent (a repeated payout id is the same payout: read back).
  send(account: OpenedConnectorAccount, input: PayoutInput): Promise<PayoutState>;
  // null: the PSP has no payout with this id (it was never received).
  read(account: OpenedConnectorAccount, payoutId: string): Promise<PayoutState | null>;
  // The balance available to send from, in centavos.
  balance(account: OpenedConnectorAccount): Promise<number>;
  parseNotification(body: unknown): PayoutHints;
}

// The card port (issue 27). A card acquirer is one folder implementing CardConnector
// (providers/adyen/ first); the payments module speaks only these types.

export interface CardSettings {
  // The acquirer's API base, e.g. https://checkout-test.adyen.com/v71 (Adyen's test) or
  // https://{prefix}-checkout-live.adyenpayments.com/checkout/v71 (live).
  baseUrl: string;
  // Adyen's merchant account the payments are made on.
  merchantAccount: string;
  // The public client key the browser encrypts card fields with (not a secret).
  clientKey: string | null;
  // The origin the acquirer's browser library is loaded from (Adyen: checkoutshopper), when not
  // the default of the environment; the hosted page's CSP allows exactly this origin, live only.
  clientOrigin?: string;
  // Captures: automatic (the acquirer captures on authorization; the default) or manual (a
  // payment waits in requires_capture for POST /v1/payments/{id}/capture).
  captureMode?: 'automatic' | 'manual';
  // Per-call timeout; default 10 s.
  timeoutMs?: number;
}

export interface CardSecrets {
  apiKey: string;
  // The notifications' HMAC key, hex, as the acquirer's customer area shows it.
  hmacKey: string;
  // The token in our notification URL.
  webhookToken: string;
}

export type OpenedCardAccount = OpenedConnectorAccount<CardSettings, CardSecrets>;

// What the buyer must do before the acquirer decides (3-D Secure): a redirect, or the data a
// challenge component needs. `data` is the acquirer's action object, passed through as is.
export interface CardNextAction {
  type: 'redirect' | 'three_ds_challenge' | 'three_ds_fingerprint';
  url: string | null;
  method: 'GET' | 'POST' | null;
  data: Record<string, unknown>;
}

// The acquirer's answer to an authorization (or to the completion of its action), mapped from
// its result code. `pending`: the acquirer decides later, by notification.
export type CardAuthorization =
  | { status: 'approved'; pspReference: string }
  | { status: 'declined'; pspReference: string | null; code: 'card_declined' | 'insufficient_funds'; message: string }
  | { status: 'failed'; pspReference: string | null; code: 'acquirer_error'; message: string }
  | { status: 'canceled'; pspReference: string | null }
  | { status: 'pending'; pspReference: string | null }
  | { status: 'requires_action'; pspReference: string | null; action: CardNextAction };

export interface CardAuthorizeInput {
  // Our payment id: the acquirer's merchant reference.
  reference: string;
  // Derived from our payment id: a retry is the same authorization, never a second one.
  idempotencyKey: string;
  amountCents: number;
  installments: number;
  // What the card token wraps for the acquirer (Adyen: the client-side encrypted fields).
  paymentMethod: Record<string, unknown>;
  // Where the buyer comes back after a redirect.
  returnUrl: string;
  // Authorize only: the capture comes later, on request (manual capture).
  manualCapture?: boolean;
}

// A modification (capture, refund, cancel) is only received at once; its outcome comes by
// notification.
export interface CardModification {
  pspReference: string;
  status: 'received';
}

export interface CardModificationInput {
  // The payment's reference at the acquirer (its pspReference).
  paymentPspReference: string;
  // Our id of the modification (the refund's id, the payment's for a capture or cancel).
  reference: string;
  idempotencyKey: string;
  amountCents?: number;
}

// One notification item, its signature verified. Hints for the sync: which payment, which
// event, whether it succeeded.
export interface CardNotification {
  eventCode: string;
  success: boolean;
  pspReference: string;
  originalReference: string | null;
  merchantReference: string;
  amountCents: number | null;
  currency: string | null;
  reason: string | null;
  eventDate: string | null;
  // A dispute notification (a chargeback and its stages), as the connector maps it: null for
  // every other event. `rank` orders the stages (a later one wins; an earlier one arriving late
  // is ignored), `status` is ours (domain/states.ts, DISPUTE_STATUSES).
  dispute?: CardDisputeStage | null;
}

export interface CardDisputeStage {
  rank: number;
  status: 'needs_response' | 'under_review' | 'won' | 'lost';
  respondBy: string | null;
  reasonCode: string | null;
}

export interface CardNotificationBatch {
  // Items whose signature verified.
  accepted: CardNotification[];
  // Items whose signature did not (or that had none).
  rejected: number;
}

export interface CardConnector {
  readonly name: string;
  authorize(account: OpenedCardAccount, input: CardAuthorizeInput): Promise<CardAuthorization>;
  // The buyer came back from the action: the acquirer decides with what the action returned.
  completeAction(account: OpenedCardAccount, input: { details: Record<string, string>; paymentData?: string }): Promise<CardAuthorization>;
  capture(account: OpenedCardAccount, input: CardModificationInput & { amountCents: number }): Promise<CardModification>;
  refund(account: OpenedCardAccount, input: CardModificationInput & { amountCents: number }): Promise<CardModification>;
  cancel(account: OpenedCardAccount, input: CardModificationInput): Promise<CardModification>;
  // A cancel by our reference alone, for an authorization whose answer never came.
  cancelByReference(account: OpenedCardAccount, input: { paymentReference: string; reference: string; idempotencyKey: string }): Promise<CardModification>;
  verifyNotifications(account: OpenedCardAccount, body: unknown): CardNotificationBatch;
}
