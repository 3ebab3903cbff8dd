import assert from 'node:assert/strict';
import type { RequestContext } from '../../plugins/idempotency.js';
import type { Store, Tx } from '../../store/index.js';
import { ApiError, validation } from '../../errors.js';
import { newId } from '../../domain/ids.js';
import { buildPixBrCode, pixTxidFromId } from '../../domain/pix.js';
import { READY_TOKENS, type TestOutcome } from '../../domain/card.js';
import { enqueue } from '../../jobs/queue.js';
import { recordEvent, type Owner } from '../events/service.js';
import { JOB_CONFIRM, JOB_EXPIRE, type PaymentDeps } from './common.js';
import { insertPaymentRow, markCardTokenUsed, readCardToken, readCardTokenOutcome, toPayment, type PaymentRow } from './repository.js';
import type { CreatePaymentBody, CreatePaymentFields, Payment } from './schemas.js';
import { chargeAtProvider } from './live-pix.js';

// Create: validate (the body's shape rules, the provider's breaker), build the row, persist it
// with its job (confirmation or expiry) and its event in one write. The provider is called by
// the confirmation job (confirm.ts), never in the request.

// Keeps `*`, so masking a masked document changes nothing: a checkout session stores its
// customer masked and hands that to the payment it makes (the request schemas never admit `*`).
export function maskDocument(doc: string): string {
  const clean = doc.replace(/[^0-9A-Za-z*]/g, '');
  return '*'.repeat(Math.max(0, clean.length - 2)) + clean.slice(-2);
}

export function maskCustomer<C extends { document?: string }>(customer: C | undefined): C | null {
  if (!customer) return null;
  return customer.document ? { ...customer, document: maskDocument(customer.document) } : customer;
}

// The shape rules of CreatePaymentRequest's oneOf, in words: run on a body that matches no
// shape (see http/shapes.ts) and again here. Returns the amount in centavos.
export function checkPaymentShape(body: CreatePaymentFields): number {
  const hasA = body.amount !== undefined;
  const hasB = body.amountInCents !== undefined;
  if (hasA === hasB) {
    throw validation(hasA ? 'Send either amount or amountInCents, not both.' : 'amount is required: a positive integer number of centavos (or amountInCents).', 'amount');
  }
  if (body.method === 'credit_card') {
    if (!body.cardToken) throw validation('cardToken is required for credit_card payments.', 'cardToken');
    if (body.pixExpiresInSeconds !== undefined) throw validation('pixExpiresInSeconds only applies to pix payments.', 'pixExpiresInSeconds');
  } else {
    if (body.returnUrl !== undefined) throw validation('returnUrl only applies to credit_card payments (the buyer comes back to it after 3-D Secure).', 'returnUrl');
    if (body.cardToken !== undefined) throw validation('cardToken is not accepted for pix payments.', 'cardToken');
    if (body.installments !== undefined) throw validation('installments only applies to credit_card payments.', 'installments');
  }
  return (hasA ? body.amount : body.amountInCents) as number;
}

// Resolves a card token to what the payment shows (brand, last4), consuming a single-use token
// inside the payment's own transaction so two payments can never share one.
async function useCardToken(tx: Tx, owner: Owner, token: string, nowIso: string): Promise<{ brand: string; last4: string }> {
  const ready = READY_TOKENS[token];
  if (ready) {
    if (owner.livemode) throw validation('Test tokens only work with sandbox keys.', 'cardToken');
    return ready;
  }
  const row = await readCardToken(tx, owner, token);
  if (!row) throw validation('No such card token.', 'cardToken');
  if (row.used_at) throw new ApiError('UNPROCESSABLE', 'This card token was already used; tokenize the card again.', { param: 'cardToken' });
  await markCardTokenUsed(tx, token, nowIso);
  return { brand: row.brand, last4: row.last4 };
}

// A merchant's returnUrl: an absolute https URL (plain http only to this machine, with test
// keys: a shop developed locally), without credentials. Returns it as sent.
export function checkReturnUrl(value: string, livemode: boolean): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw validation('returnUrl is not a valid URL.', 'returnUrl');
  }
  const local = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local && !livemode)) {
    throw validation(livemode ? 'returnUrl must be an https URL.' : 'returnUrl must be an https URL (plain http only to localhost or 127.0.0.1, with test keys).', 'returnUrl');
  }
  if (url.username || url.password) throw validation('returnUrl must not carry a user name or password.', 'returnUrl');
  return value;
}

export async function cardOutcome(store: Store, token: string): Promise<TestOutcome> {
  const ready = READY_TOKENS[token];
  if (ready) return ready.outcome;
  return ((await readCardTokenOutcome(store.db, token)) as TestOutcome | undefined) ?? 'approve';
}

export interface PreparedPayment {
  row: PaymentRow;
  // When its background job runs: the card confirmation at once, the Pix expiry at its end.
  jobAtMs: number;
}

// Validate and build: the payment row of a create, before its transaction (the BR Code is pure
// work).
export function preparePayment(deps: PaymentDeps, owner: Owner, body: CreatePaymentBody, checkoutSessionId: string | null = null): PreparedPayment {
  const amountCents = checkPaymentShape(body);
  if (body.method === 'credit_card') {
    const retryAfter = deps.breaker.retryAfterSeconds(deps.store.clock.nowMs());
    if (retryAfter > 0) {
      throw new ApiError('PROVIDER_UNAVAILABLE', 'The card provider is not answering; nothing was charged. Retry later with the same Idempotency-Key.', { headers: { 'retry-after': String(retryAfter) } });
    }
  }
  const nowMs = deps.store.clock.nowMs();
  const nowIso = new Date(nowMs).toISOString();
  const id = newId('payment', nowMs);
  const customer = maskCustomer(body.customer);
  const row: PaymentRow = {
    id,
    account_id: owner.accountId,
    livemode: owner.livemode ? 1 : 0,
    status: 'pending',
    amount: amountCents,
    currency: 'BRL',
    method: body.method,
    description: body.description ?? null,
    metadata: body.metadata ? JSON.stringify(body.metadata) : null,
    customer: customer ? JSON.stringify(customer) : null,
    installments: body.method === 'credit_card' ? body.installments ?? 1 : null,
    card_token: body.method === 'credit_card' ? body.cardToken ?? null : null,
    card_brand: null,
    card_last4: null,
    pix_copy_paste: null,
    expires_at: null,
    failure_code: null,
    failure_message: null,
    amount_refunded: 0,
    fee_amount: null,
    net_amount: null,
    provider_charge_id: null,
    provider_attempts: 0,
    created_at: nowIso,
    updated_at: nowIso,
    checkout_session_id: checkoutSessionId,
    connector_account_id: null,
    provider_txid: null,
    provider_e2eid: null,
    next_action: null,
    action_expires_at: null,
    capture_method: null,
    capture_status: null,
    capture_reference: null,
    return_url: body.method === 'credit_card' && body.returnUrl !== undefined ? checkReturnUrl(body.returnUrl, owner.livemode) : null,
  };
  let jobAtMs = nowMs;
  if (body.method === 'pix') {
    jobAtMs = nowMs + (body.pixExpiresInSeconds ?? deps.config.pixExpiresInSeconds) * 1000;
    row.expires_at = new Date(jobAtMs).toISOString();
    row.pix_copy_paste = buildPixBrCode({
      pixKey: deps.config.pixKey,
      amountCents,
      txid: pixTxidFromId(id),
      merchantName: deps.config.pixMerchantName,
      merchantCity: deps.config.pixMerchantCity,
    });
  }
  return { row, jobAtMs };
}

// Persist, in the caller's transaction: the card token consumed, the row, its job (the
// provider is called by the confirmation job, confirm.ts) and its event.
export async function insertPayment(tx: Tx, owner: Owner, prepared: PreparedPayment): Promise<Payment> {
  const { row } = prepared;
  if (row.method === 'credit_card') {
    assert(row.card_token !== null, 'a card payment has its token (checkPaymentShape)');
    const card = await useCardToken(tx, owner, row.card_token, row.created_at);
    row.card_brand = card.brand;
    row.card_last4 = card.last4;
  }
  await insertPaymentRow(tx, row);
  await enqueue(tx, Date.parse(row.created_at), row.method === 'credit_card' ? JOB_CONFIRM : JOB_EXPIRE, { paymentId: row.id }, prepared.jobAtMs);
  const resource = toPayment(row);
  await recordEvent(tx, owner, 'payment.created', resource, Date.parse(row.created_at));
  return resource;
}

export async function createPayment(deps: PaymentDeps, ctx: RequestContext, body: CreatePaymentBody): Promise<Payment> {
  const prepared = preparePayment(deps, ctx, body);
  // Live mode: the charge at the PSP first (or a refusal, with nothing written).
  await chargeAtProvider(deps, ctx, prepared);
  const payment = await ctx.write((tx) => insertPayment(tx, ctx, prepared));
  if (body.method === 'credit_card') deps.kickWorker();
  return payment;
}
