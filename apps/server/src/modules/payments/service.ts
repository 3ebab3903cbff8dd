import { createHash } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Store, Tx } from '../../store/index.js';
import type { RequestContext } from '../../plugins/idempotency.js';
import { ApiError, validation } from '../../errors.js';
import { newId } from '../../domain/ids.js';
import { buildPixBrCode, pixTxidFromId } from '../../domain/pix.js';
import { READY_TOKENS, type TestOutcome } from '../../domain/card.js';
import { computeFee, type PaymentMethod } from '../../domain/fees.js';
import { parseSettings } from '../accounts/settings.js';
import { insertRows, selectWhere } from '../../store/fast.js';
import { createSaleReceivables } from '../receivables/service.js';
import { enqueue, complete, reschedule, type JobRow } from '../../jobs/queue.js';
import { emitEvents, recordEvent, type Owner } from '../events/service.js';
import { paginate } from '../../http/pagination.js';
import { ProviderUnavailable, type PaymentProvider } from '../../providers/port.js';
import type { CircuitBreaker } from '../../providers/breaker.js';
import type { CreatePaymentBody, ListPaymentsQuery, Payment } from './schemas.js';
import { loadPayment, toPayment, transition, type PaymentRow } from './repository.js';

export const JOB_CONFIRM = 'payment.confirm';
export const JOB_EXPIRE = 'payment.expire';

export interface PaymentDeps {
  store: Store;
  config: Config;
  provider: PaymentProvider;
  // Wakes the in-process worker so a card payment is confirmed "a moment later", not at the
  // next poll.
  kickWorker: () => void;
  breaker: CircuitBreaker;
}

function maskDocument(doc: string): string {
  const clean = doc.replace(/[^0-9A-Za-z]/g, '');
  return '*'.repeat(Math.max(0, clean.length - 2)) + clean.slice(-2);
}

function checkShape(body: CreatePaymentBody): number {
  const hasA = body.amount !== undefined;
  const hasB = body.amountInCents !== undefined;
  if (hasA === hasB) {
    throw validation(hasA ? 'Send either amount or amountInCents, not both.' : 'amount is required: a positive integer number of centavos (or amountInCents).', 'amount');
  }
  if (body.method === 'credit_card') {
    if (!body.cardToken) throw validation('cardToken is required for credit_card payments.', 'cardToken');
    if (body.pixExpiresInSeconds !== undefined) throw validation('pixExpiresInSeconds only applies to pix payments.', 'pixExpiresInSeconds');
  } else {
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
  const row = await tx.selectFrom('card_tokens').select(['brand', 'last4', 'used_at'])
    .where('id', '=', token).where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0)
    .executeTakeFirst();
  if (!row) throw validation('No such card token.', 'cardToken');
  if (row.used_at) throw new ApiError('UNPROCESSABLE', 'This card token was already used; tokenize the card again.', { param: 'cardToken' });
  await tx.updateTable('card_tokens').set({ used_at: nowIso }).where('id', '=', token).where('used_at', 'is', null).execute();
  return { brand: row.brand, last4: row.last4 };
}

export async function cardOutcome(store: Store, token: string): Promise<TestOutcome> {
  const ready = READY_TOKENS[token];
  if (ready) return ready.outcome;
  const row = await store.db.selectFrom('card_tokens').select('test_outcome').where('id', '=', token).executeTakeFirst();
  return (row?.test_outcome as TestOutcome | undefined) ?? 'approve';
}

export async function createPayment(deps: PaymentDeps, ctx: RequestContext, body: CreatePaymentBody): Promise<Payment> {
  const amountCents = checkShape(body);
  if (body.method === 'credit_card') {
    const retryAfter = deps.breaker.retryAfterSeconds();
    if (retryAfter > 0) {
      throw new ApiError('PROVIDER_UNAVAILABLE', 'The card provider is not answering; nothing was charged. Retry later with the same Idempotency-Key.', { headers: { 'retry-after': String(retryAfter) } });
    }
  }
  const nowMs = Date.now();
  const nowIso = new Date(nowMs).toISOString();
  const id = newId('payment', nowMs);
  const customer = body.customer
    ? { ...body.customer, ...(body.customer.document ? { document: maskDocument(body.customer.document) } : {}) }
    : null;
  const row: PaymentRow = {
    id,
    account_id: ctx.accountId,
    livemode: ctx.livemode ? 1 : 0,
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
  };
  let expiresAtMs = 0;
  if (body.method === 'pix') {
    expiresAtMs = nowMs + (body.pixExpiresInSeconds ?? deps.config.pixExpiresInSeconds) * 1000;
    row.expires_at = new Date(expiresAtMs).toISOString();
    row.pix_copy_paste = buildPixBrCode({
      pixKey: deps.config.pixKey,
      amountCents,
      txid: pixTxidFromId(id),
      merchantName: deps.config.pixMerchantName,
      merchantCity: deps.config.pixMerchantCity,
    });
  }
  const payment = await ctx.write(async (tx) => {
    if (body.method === 'credit_card') {
      const card = await useCardToken(tx, ctx, body.cardToken as string, nowIso);
      row.card_brand = card.brand;
      row.card_last4 = card.last4;
    }
    await insertRows(tx, 'payments', [row]);
    if (body.method === 'credit_card') await enqueue(tx, JOB_CONFIRM, { paymentId: id }, nowMs);
    else await enqueue(tx, JOB_EXPIRE, { paymentId: id }, expiresAtMs);
    const resource = toPayment(row);
    await recordEvent(tx, ctx, 'payment.created', resource, nowMs);
    return resource;
  });
  if (body.method === 'credit_card') deps.kickWorker();
  return payment;
}

export async function getPayment(deps: PaymentDeps, owner: Owner, id: string): Promise<Payment> {
  return toPayment(await loadPayment(deps.store.db, owner, id));
}

export async function listPayments(deps: PaymentDeps, owner: Owner, query: ListPaymentsQuery) {
  let qb = deps.store.db.selectFrom('payments').selectAll()
    .where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0);
  if (query.status) qb = qb.where('status', '=', query.status);
  if (query.method) qb = qb.where('method', '=', query.method);
  return paginate(qb, query, toPayment);
}

async function moveWithEvent(tx: Tx, row: PaymentRow, to: 'approved' | 'declined' | 'failed' | 'canceled' | 'expired', changes: Partial<PaymentRow> = {}): Promise<Payment> {
  const moved = toPayment(await transition(tx, row, to, changes));
  await recordEvent(tx, { accountId: row.account_id, livemode: row.livemode === 1 }, `payment.${to}`, moved);
  return moved;
}

// Approval is one transaction: the status move, its fee and net, the receivables of the split
// and their events. The guarded UPDATE in transition() makes a second approval impossible, and
// the receivables' unique (source_id, line) key would refuse a second set anyway.
async function approve(tx: Tx, row: PaymentRow, changes: Partial<PaymentRow>): Promise<Payment> {
  const [account] = await selectWhere(tx, 'accounts', ['settings'], { id: row.account_id });
  const settings = parseSettings(account.settings);
  const method = row.method as PaymentMethod;
  const { feeCents, netCents } = computeFee(row.amount, method, settings.fees);
  const nowMs = Date.now();
  const owner = { accountId: row.account_id, livemode: row.livemode === 1 };
  const approved = toPayment(await transition(tx, row, 'approved', { ...changes, fee_amount: feeCents, net_amount: netCents }));
  const receivables = await createSaleReceivables(tx, { paymentId: row.id, ...owner, amountCents: row.amount, netCents, method }, settings, nowMs);
  await emitEvents(tx, owner, [
    { type: 'payment.approved', object: approved },
    ...receivables.map((r) => ({ type: 'receivable.created', object: r })),
  ], nowMs);
  return approved;
}

export async function cancelPayment(deps: PaymentDeps, ctx: RequestContext, id: string): Promise<Payment> {
  return ctx.write(async (tx) => moveWithEvent(tx, await loadPayment(tx, ctx, id), 'canceled'));
}

export async function sandboxPayPix(deps: PaymentDeps, ctx: RequestContext, id: string): Promise<Payment> {
  if (ctx.livemode) throw new ApiError('PERMISSION_DENIED', 'The payer simulator only exists in the sandbox; use a sk_test_ key.');
  return ctx.write(async (tx) => {
    const row = await loadPayment(tx, ctx, id);
    if (row.method !== 'pix') throw invalidStateFor(row, 'Only pix payments are paid through the simulator; card payments are confirmed by the provider.');
    if (row.status === 'pending' && row.expires_at && Date.parse(row.expires_at) <= Date.now()) {
      throw new ApiError('INVALID_STATE', 'This Pix BR Code has expired.');
    }
    return approve(tx, row, {});
  });
}

function invalidStateFor(_row: PaymentRow, message: string): ApiError {
  return new ApiError('INVALID_STATE', message);
}

function backoffMs(baseMs: number, attempt: number): number {
  // Exponential with ±20% jitter so retries from many payments do not arrive in lockstep.
  const raw = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), 3_600_000);
  return Math.round(raw * (0.8 + Math.random() * 0.4));
}

function providerKey(paymentId: string, operation: string): string {
  return createHash('sha256').update(`${paymentId}:${operation}`).digest('hex').slice(0, 40);
}

// Worker: confirm a card payment with the provider. Validate, load, call (the claim that
// leased this job is already persisted), persist the result with its event and the job's
// completion in one transaction.
export async function confirmCardJob(deps: PaymentDeps, job: JobRow, workerId: string): Promise<void> {
  const { store, config, provider } = deps;
  const { paymentId } = JSON.parse(job.payload) as { paymentId: string };
  const [current] = await selectWhere(store.db, 'payments', '*', { id: paymentId });
  if (!current || current.status !== 'pending') {
    await store.write((tx) => complete(tx, job, workerId));
    return;
  }
  let result;
  try {
    result = await provider.authorize({
      idempotencyKey: providerKey(current.id, 'authorize'),
      amountCents: current.amount,
      currency: 'BRL',
      cardToken: current.card_token ?? '',
      installments: current.installments ?? 1,
      livemode: current.livemode === 1,
    });
  } catch (error) {
    if (!(error instanceof ProviderUnavailable)) throw error;
    deps.breaker.recordFailure();
    await store.write(async (tx) => {
      const row = await tx.selectFrom('payments').selectAll().where('id', '=', paymentId).executeTakeFirstOrThrow();
      if (row.status !== 'pending') return complete(tx, job, workerId);
      if (job.attempts >= config.providerMaxAttempts) {
        await moveWithEvent(tx, row, 'failed', { failure_code: 'provider_unavailable', failure_message: 'The payment provider could not be reached; no charge was made.', provider_attempts: job.attempts });
        return complete(tx, job, workerId);
      }
      await tx.updateTable('payments').set({ provider_attempts: job.attempts }).where('id', '=', paymentId).execute();
      await reschedule(tx, job, workerId, Date.now() + backoffMs(config.providerRetryBaseMs, job.attempts), error.message);
    });
    return;
  }
  deps.breaker.recordSuccess();
  const outcome = result;
  const honoured = await store.write(async (tx) => {
    const [row] = await selectWhere(tx, 'payments', '*', { id: paymentId });
    if (row.status !== 'pending') {
      await complete(tx, job, workerId);
      return false;
    }
    const attempts = { provider_attempts: job.attempts };
    if (outcome.status === 'approved') await approve(tx, row, { provider_charge_id: outcome.chargeId, ...attempts });
    else await moveWithEvent(tx, row, 'declined', { failure_code: outcome.code, failure_message: outcome.message, ...attempts });
    await complete(tx, job, workerId);
    return true;
  });
  if (!honoured && outcome.status === 'approved') {
    // Canceled while the provider was approving: give the authorization back.
    await provider.void({ idempotencyKey: providerKey(paymentId, 'void'), chargeId: outcome.chargeId });
  }
}

export async function expirePixJob(deps: PaymentDeps, job: JobRow, workerId: string): Promise<void> {
  const { paymentId } = JSON.parse(job.payload) as { paymentId: string };
  await deps.store.write(async (tx) => {
    const row = await tx.selectFrom('payments').selectAll().where('id', '=', paymentId).executeTakeFirst();
    if (row && row.status === 'pending') await moveWithEvent(tx, row, 'expired');
    await complete(tx, job, workerId);
  });
}
