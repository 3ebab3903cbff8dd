// Row types of the store, shared by both engines. Booleans are 0/1 integers and timestamps ISO
// strings in both engines so that one query means the same thing on SQLite and PostgreSQL.
// Scheduling columns (`*_at_ms`) are integer milliseconds because they are compared, not shown.
import type { ColumnType, Generated } from 'kysely';

export interface AccountsTable {
  id: string;
  name: string;
  email: string | null;
  live_enabled: number;
  settings: string; // JSON: fee schedule and settlement delays (marketplace issue)
  // JSON {bankCode, agency, account, accountType}: where the merchant's settlements are paid;
  // null until an admin sets it (merchant settlements are held meanwhile).
  payout_bank_account: string | null;
  // JSON {type, key}: the merchant's Pix key for payouts, preferred to the bank account (issue 26).
  payout_pix_key: string | null;
  // The CPF or CNPJ (canonical digits) of whoever holds the payout bank account and Pix key
  // (0018): a CPF/CNPJ key must be it, and a payout to the bank account sends it as the holder's.
  payout_holder_document: string | null;
  // JSON string[]: origins allowed to frame the hosted checkout; null = the sandbox default.
  embed_origins: string | null;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  livemode: number;
  kind: 'secret' | 'publishable';
  key_hash: string;
  display: string; // e.g. "sk_test_…a1b2": enough to recognise, never enough to use
  created_at: string;
  revoked_at: string | null;
  // The publishable key itself (public by design: the hosted checkout hands it to the page);
  // null for secret keys, which are only ever stored hashed.
  publishable_key: string | null;
}

export interface PaymentsTable {
  id: string;
  account_id: string;
  livemode: number;
  status: string;
  amount: number;
  currency: string;
  method: string;
  description: string | null;
  metadata: string | null;
  customer: string | null;
  installments: number | null;
  card_token: string | null;
  card_brand: string | null;
  card_last4: string | null;
  pix_copy_paste: string | null;
  expires_at: string | null;
  failure_code: string | null;
  failure_message: string | null;
  amount_refunded: number;
  fee_amount: number | null;
  net_amount: number | null;
  provider_charge_id: string | null;
  provider_attempts: number;
  created_at: string;
  updated_at: string;
  // The checkout session the payment was made in (null for API payments).
  checkout_session_id: string | null;
  // Live Pix at a PSP (issue 25): the connector account, the charge's txid, the Pix's e2eid.
  connector_account_id: ColumnType<string | null, string | null | undefined, string | null>;
  provider_txid: ColumnType<string | null, string | null | undefined, string | null>;
  provider_e2eid: ColumnType<string | null, string | null | undefined, string | null>;
  // requires_action: what the buyer must do (JSON, the port's CardNextAction), and until when.
  next_action: ColumnType<string | null, string | null | undefined, string | null>;
  action_expires_at: ColumnType<string | null, string | null | undefined, string | null>;
  // The merchant's page the buyer lands on after 3-D Secure (create's returnUrl), or null.
  return_url: ColumnType<string | null, string | null | undefined, string | null>;
  // Live cards: 'automatic' | 'manual' (the acquirer account's setting when it was made); with
  // manual, the capture: null (not asked) | 'processing' | 'succeeded' | 'failed', and the
  // acquirer's reference of the capture.
  capture_method: ColumnType<string | null, string | null | undefined, string | null>;
  capture_status: ColumnType<string | null, string | null | undefined, string | null>;
  capture_reference: ColumnType<string | null, string | null | undefined, string | null>;
}

// Adyen's notification items, verified and stored once each (issue 27).
export interface CardNotificationsTable {
  id: string;
  connector_account_id: string;
  psp_reference: string;
  original_reference: string | null;
  merchant_reference: string;
  event_code: string;
  success: number;
  amount: ColumnType<number | null, number | null, number | null>;
  reason: string | null;
  event_date: string | null;
  payment_id: string | null;
  received_at: string;
  // A dispute notification's additionalData as we read it (JSON {status, respondBy, reasonCode});
  // null for every other event (migration 0017).
  dispute_data: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface DisputesTable {
  id: string;
  account_id: string;
  livemode: number;
  payment_id: string;
  kind: 'card_chargeback' | 'pix_med';
  status: 'needs_response' | 'under_review' | 'won' | 'lost';
  amount: number;
  reason: string | null;
  reason_code: string | null;
  respond_by: string | null;
  // Adyen's dispute pspReference, or the MED return's id at the PSP.
  source_ref: string;
  connector_account_id: string | null;
  refund_id: string | null; // a Pix MED: the refund that recorded the return
  stage_rank: number; // the furthest source notification applied (live-card.ts, DISPUTE_STAGES)
  debited_amount: number; // what the payees give up for it now (0 unless lost)
  money_moves: number; // debits and give-backs made so far (numbers their receivables' lines)
  created_at: string;
  updated_at: string;
  closed_at: string | null;
}

export interface CheckoutSessionsTable {
  id: string;
  account_id: string;
  livemode: number;
  status: string; // open | complete | expired
  amount: number;
  currency: string;
  methods: string; // JSON array
  description: string | null;
  metadata: string | null;
  customer: string | null;
  installments: number; // the most the buyer may choose
  success_url: string | null;
  cancel_url: string | null;
  // The instance's public URL when the session was made (PUBLIC_URL, else the request's
  // origin): the page's `url` is built on it, in answers and in events alike.
  base_url: string;
  client_secret: string;
  payment_id: string | null; // the session's latest payment
  expires_at: string;
  expires_at_ms: number;
  completed_at: string | null;
  expired_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface CardTokensTable {
  id: string;
  account_id: string;
  livemode: number;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  // Sandbox behaviour chosen by the test card number; the number itself is never stored.
  test_outcome: string;
  used_at: string | null;
  created_at: string;
  // A live token's acquirer payload (JSON: the browser-encrypted card fields); null in the sandbox.
  acquirer_data: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface IdempotencyKeysTable {
  account_id: string;
  livemode: number;
  key: string;
  fingerprint: string;
  status_code: number;
  body: string;
  created_at: string;
  created_at_ms: number;
}

export interface JobsTable {
  id: string;
  type: string;
  payload: string;
  run_at_ms: number;
  attempts: number;
  locked_until_ms: number | null;
  locked_by: string | null;
  last_error: string | null;
  created_at: string;
}

export interface EventsTable {
  id: string;
  account_id: string;
  livemode: number;
  type: string;
  data: string;
  created_at: string;
  created_at_ms: number;
}

export interface SandboxProviderChargesTable {
  idempotency_key: string;
  charge_id: string;
  outcome: string;
  amount: number;
  created_at: string;
}

export interface RecipientsTable {
  id: string;
  account_id: string;
  livemode: number;
  name: string;
  document: string; // CNPJ, canonical 14 characters
  bank_code: string;
  agency: string;
  account: string;
  account_type: string;
  // A Pix key (domain/pix-key.ts), preferred to the bank account for payouts; both null when none.
  pix_key_type: string | null;
  pix_key: string | null;
  metadata: string | null;
  created_at: string;
  updated_at: string;
}

export interface SplitRulesTable {
  id: string;
  account_id: string;
  livemode: number;
  priority: number;
  conditions: string | null; // JSON {method?, minAmount?, maxAmount?}
  splits: string; // JSON [{recipientId, percentage} | {recipientId, amount}]
  active: number;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface ReceivablesTable {
  id: string;
  account_id: string;
  livemode: number;
  payment_id: string;
  // What made it: the payment (sale) or a refund (a negative adjustment); with `line`, unique,
  // so a sale can never produce its receivables twice.
  source_id: string;
  line: number;
  payee_type: 'merchant' | 'recipient';
  payee_id: string;
  split_rule_id: string | null;
  amount: number;
  // The amount as the row was made: a sale's share of its net value (refunds reduce `amount` in
  // place, never this), or a refund adjustment's own amount. Refunds prorate on it
  // (domain/refund.ts). Null only on sale rows from before migration 0009 whose original could
  // not be recovered.
  original_amount: number | null;
  status: 'pending' | 'settled' | 'canceled';
  available_on: string; // YYYY-MM-DD
  settlement_id: string | null;
  refund_id: string | null;
  // For a dispute's debit or give-back: the dispute (migration 0017).
  dispute_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: string;
  updated_at: string;
}

export interface SettlementsTable {
  id: string;
  account_id: string;
  livemode: number;
  run_id: string;
  payee_type: 'merchant' | 'recipient';
  payee_id: string;
  amount: number;
  receivable_count: number;
  status: 'held' | 'pending' | 'processing' | 'paid' | 'failed';
  bank_account: string | null; // JSON snapshot at settlement time (or at release, for a held one)
  // JSON {type, key} snapshot of the payee's Pix key, preferred to the bank account (issue 26).
  pix_key: string | null;
  hold_reason: string | null; // why a `held` settlement waits (schemas.ts HOLD_REASONS)
  settlement_date: string;
  paid_at: string | null;
  failure_reason: string | null;
  // The payout by Pix at a PSP (issue 26): the connector account that sends it, our id for it
  // there (idEnvio, derived from the settlement id), where it went (masked), the PSP's
  // end-to-end id once known, when it was sent, and the PSP's code when it failed.
  payout_connector_account_id: string | null;
  payout_id: string | null;
  payout_destination: string | null;
  payout_e2eid: string | null;
  payout_sent_at: string | null;
  payout_slot_ms: number | null;
  failure_code: string | null;
  // The failed settlement an operator's retry made this one for (0018); null otherwise.
  retry_of: string | null;
  created_at: string;
  updated_at: string;
}

// One row per connector account that sends payouts: the next time a payout may be sent from it
// (payouts are sent one at a time per source account, at a configured rate).
export interface PayoutSourcesTable {
  connector_account_id: string;
  next_slot_ms: number;
}

export interface SettlementRunsTable {
  id: string;
  run_date: string;
  status: 'pending' | 'running' | 'completed';
  trigger: 'schedule' | 'admin';
  settlement_count: number;
  receivable_count: number;
  total_amount: number;
  started_at: string;
  finished_at: string | null;
}

export interface RefundsTable {
  id: string;
  account_id: string;
  livemode: number;
  payment_id: string;
  amount: number;
  fee_refunded: number;
  net_amount: number; // amount - fee_refunded: what comes off the payees' receivables
  status: 'pending' | 'succeeded' | 'failed';
  reason: string | null;
  metadata: string | null;
  provider_refund_id: string | null;
  // A live Pix devolução's rtrId (migration 0013); null in the sandbox or until the PSP gives it.
  provider_rtr_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: string;
  updated_at: string;
  // 'requested' (POST /v1/refunds), or a return the payer's bank started: 'med_fraud',
  // 'med_operational' (Pix MED), recorded as a refund.
  kind: Generated<string>;
}

export interface AdminUsersTable {
  id: string;
  email: string;
  password_hash: string;
  role: 'admin' | 'viewer';
  created_at: string;
}

export interface AdminSessionsTable {
  id_hash: string;
  admin_id: string;
  csrf_token: string;
  expires_at_ms: number;
  created_at: string;
}

// Failed admin sign-ins of the last window, per email (`e:<email>`) or client address
// (`i:<ip>`): shared by every API process (modules/admin/sessions/service.ts).
export interface AdminSignInFailuresTable {
  key: string;
  failures: string; // JSON number[]: the failures' times (ms), oldest first, at most the limit
  updated_at_ms: number;
}

// One row per admin mutation, written in the mutation's own transaction (modules/admin/audit.ts).
// Rows are never updated or deleted. `before`/`after` are JSON snapshots of the object.
export interface AdminAuditLogTable {
  id: string;
  actor_id: string;
  actor_email: string;
  actor_role: string;
  action: string;
  object_type: string;
  object_id: string;
  before: string | null;
  after: string | null;
  reason: string | null;
  ip: string;
  user_agent: string | null;
  correlation_id: string;
  created_at: string;
}

export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  livemode: number;
  url: string;
  events: string; // JSON array of types, or ["*"]
  description: string | null;
  enabled: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at_ms: number | null;
  disabled_reason: string | null;
  failing_since_ms: number | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  event_id: string;
  account_id: string;
  livemode: number;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  next_attempt_at_ms: number | null;
  last_response_code: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  locked_until_ms: number | null;
  locked_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface ConnectorAccountsTable {
  id: string;
  owner_account_id: string | null; // null: the platform's (every merchant's default)
  connector: string; // 'pix_api'
  method: string; // 'pix'
  environment: 'production' | 'homologation';
  status: 'active' | 'disabled';
  name: string;
  settings: string; // JSON: ConnectorSettings (no secrets)
  client_id: string;
  secrets: string; // sealed (providers/secrets/envelope.ts)
  secrets_key_id: string; // the master key that wraps them
  secrets_rotated_at: string;
  certificate_fingerprint: string | null;
  certificate_subject: string | null;
  certificate_expires_at: string | null;
  webhook_token_hash: string; // sha256 of the callback URL's token
  webhook_registered_at: string | null;
  created_at: string;
  updated_at: string;
  disabled_at: string | null;
}

export interface ProviderNotificationsTable {
  id: string;
  connector_account_id: string;
  body_hash: string;
  body: string;
  received_at: string;
}

export interface PixReceivedTable {
  e2eid: string;
  connector_account_id: string;
  txid: string | null;
  amount: number;
  paid_at: string;
  payment_id: string | null;
  status: 'matched' | 'unmatched' | 'amount_mismatch' | 'late_returned';
  created_at: string;
  updated_at: string;
}

export interface AccountBrandingTable {
  account_id: string;
  display_name: string | null;
  accent_color: string | null; // #rrggbb, lower case
  logo_type: string | null; // image/png, image/jpeg or image/webp
  logo_base64: string | null;
  logo_sha256: string | null; // hex, names the logo's URL
  logo_bytes: number | null;
  updated_at: string;
}

// Counts and sums per São Paulo day for the back office's home (migration 0011): `kind` is
// payment | refund | settlement | webhook_delivery; method/status/reason are '' where the kind
// has none. stats_deltas holds the +1/-1 rows the triggers write; the worker folds them into
// stats_daily (modules/admin/stats/service.ts). `amount2`: amount_refunded of payments,
// net_amount of refunds, receivable_count of settlements, attempts of deliveries.
export interface StatsDailyTable {
  kind: string;
  day: string;
  account_id: string;
  livemode: number;
  method: string;
  status: string;
  reason: string;
  count: number;
  amount: number;
  amount2: number;
}
export interface StatsDeltasTable extends StatsDailyTable {
  seq: Generated<number>;
}

export interface Database {
  connector_accounts: ConnectorAccountsTable;
  provider_notifications: ProviderNotificationsTable;
  pix_received: PixReceivedTable;
  account_branding: AccountBrandingTable;
  stats_daily: StatsDailyTable;
  stats_deltas: StatsDeltasTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  recipients: RecipientsTable;
  split_rules: SplitRulesTable;
  receivables: ReceivablesTable;
  settlements: SettlementsTable;
  payout_sources: PayoutSourcesTable;
  settlement_runs: SettlementRunsTable;
  refunds: RefundsTable;
  admin_users: AdminUsersTable;
  admin_sessions: AdminSessionsTable;
  admin_sign_in_failures: AdminSignInFailuresTable;
  admin_audit_log: AdminAuditLogTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  payments: PaymentsTable;
  checkout_sessions: CheckoutSessionsTable;
  card_tokens: CardTokensTable;
  card_notifications: CardNotificationsTable;
  disputes: DisputesTable;
  idempotency_keys: IdempotencyKeysTable;
  jobs: JobsTable;
  events: EventsTable;
  sandbox_provider_charges: SandboxProviderChargesTable;
  kysely_placeholder?: { id: Generated<number> };
}
