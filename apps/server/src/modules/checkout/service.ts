import type { RequestContext } from '../../plugins/idempotency.js';
import { defer, isUniqueViolation, type Store, type Tx } from '../../store/index.js';
import { ApiError, invalidState } from '../../errors.js';
import { newId } from '../../domain/ids.js';
import { paginate } from '../../http/pagination.js';
import { complete, enqueue, reschedule, type JobRow } from '../../jobs/queue.js';
import { readPayload, type JobType } from '../../jobs/payloads.js';
import { qrSvg } from '../../domain/qr.js';
import { installmentPlans } from '../../domain/installments.js';
import { brandingForPage } from '../admin/branding/service.js';
import type { Owner } from '../events/service.js';
import { randomBase62 } from '../accounts/service.js';
import { insertPayment, maskCustomer, moveWithEvent, preparePayment, type PaymentDeps } from '../payments/service.js';
import { chargeAtProvider } from '../payments/live-pix.js';
import { readPayment, toPayment, type PaymentRow } from '../payments/repository.js';
import type { CardClientEncryption } from '../../providers/adyen/client-side.js';
import type { CreatePaymentBody } from '../payments/schemas.js';
import {
  CHECKOUT_METHODS, DEFAULT_EXPIRES_IN_SECONDS,
  type CheckoutMethod, type CheckoutPayRequest, type CheckoutSession, type CheckoutSessionClientView, type CreateCheckoutSessionRequest, type ListCheckoutSessionsQuery,
} from './schemas.js';
import { loadCheckoutSession, lockCheckoutSession, lockCheckoutSessionAndPayment, markExpired, ownCheckoutSession, toCheckoutSession, type CheckoutSessionRow } from './repository.js';

export const JOB_CHECKOUT_EXPIRE = 'checkout_session.expire' as const satisfies JobType;
// A session due to expire while a card payment is being confirmed waits this long and looks again.
const EXPIRY_RETRY_MS = 5_000;
// base62 characters after `_secret_`: ~238 bits.
const CLIENT_SECRET_CHARS = 40;

export async function createCheckoutSession(deps: PaymentDeps, ctx: RequestContext, body: CreateCheckoutSessionRequest, baseUrl: string): Promise<CheckoutSession> {
  const nowMs = ctx.clock.nowMs();
  const nowIso = new Date(nowMs).toISOString();
  const id = newId('checkoutSession', nowMs);
  const expiresAtMs = nowMs + (body.expiresInSeconds ?? DEFAULT_EXPIRES_IN_SECONDS) * 1000;
  const methods = body.methods ?? [...CHECKOUT_METHODS];
  const customer = maskCustomer(body.customer);
  const row: CheckoutSessionRow = {
    id,
    account_id: ctx.accountId,
    livemode: ctx.livemode ? 1 : 0,
    status: 'open',
    amount: body.amount,
    currency: 'BRL',
    methods: JSON.stringify(methods),
    description: body.description ?? null,
    metadata: body.metadata ? JSON.stringify(body.metadata) : null,
    customer: customer ? JSON.stringify(customer) : null,
    installments: body.installments ?? 1,
    success_url: body.successUrl ?? null,
    cancel_url: body.cancelUrl ?? null,
    base_url: baseUrl.replace(/\/+$/, ''),
    client_secret: `${id}_secret_${randomBase62(CLIENT_SECRET_CHARS)}`,
    payment_id: null,
    expires_at: new Date(expiresAtMs).toISOString(),
    expires_at_ms: expiresAtMs,
    completed_at: null,
    expired_at: null,
    created_at: nowIso,
    updated_at: nowIso,
  };
  return ctx.write(async (tx) => {
    await defer(tx, 'checkout_sessions', [row]);
    // The session expires on time even if nobody looks at it.
    await enqueue(tx, nowMs, JOB_CHECKOUT_EXPIRE, { sessionId: id }, expiresAtMs);
    return toCheckoutSession(row);
  });
}

// The session's latest payment, read as every payment is (payments/repository.ts).
async function latestPayment(db: Store['db'] | Tx, row: CheckoutSessionRow): Promise<PaymentRow | undefined> {
  if (!row.payment_id) return undefined;
  return readPayment(db, row.payment_id);
}

// Expires an open session that is due, in the caller's transaction: its pending Pix expires with
// it. A card payment being confirmed holds it ('busy'): its answer decides.
async function expireNow(tx: Tx, row: CheckoutSessionRow, nowMs: number): Promise<CheckoutSessionRow | 'busy'> {
  const payment = await latestPayment(tx, row);
  if (payment?.status === 'pending') {
    if (payment.method !== 'pix') return 'busy';
    await moveWithEvent(tx, payment, 'expired', nowMs);
  }
  return markExpired(tx, row, nowMs);
}

// Sessions past their expiry read as expired even before their job has run: the read expires it.
async function expireIfDue(store: Store, row: CheckoutSessionRow): Promise<CheckoutSessionRow> {
  if (row.status !== 'open' || row.expires_at_ms > store.clock.nowMs()) return row;
  return store.write(async (tx) => {
    const nowMs = store.clock.nowMs();
    const locked = await lockCheckoutSessionAndPayment(tx, store.engine, row.id);
    if (!locked || locked.status !== 'open' || locked.expires_at_ms > nowMs) return locked ?? row;
    const result = await expireNow(tx, locked, nowMs);
    return result === 'busy' ? locked : result;
  });
}

export async function getCheckoutSession(deps: PaymentDeps, owner: Owner, id: string): Promise<CheckoutSession> {
  return toCheckoutSession(await expireIfDue(deps.store, await loadCheckoutSession(deps.store.db, owner, id)));
}

export async function listCheckoutSessions(deps: PaymentDeps, owner: Owner, query: ListCheckoutSessionsQuery) {
  const scope = deps.store.db.selectFrom('checkout_sessions').selectAll()
    .where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0);
  const qb = query.status ? scope.where('status', '=', query.status) : scope;
  return paginate(qb, query, toCheckoutSession, scope);
}

// On demand: an open session expires now, with its pending Pix. Only an open one (as Stripe's
// expire): refused once complete or expired, and while a card payment is being confirmed (its
// answer comes within seconds).
export async function expireCheckoutSession(deps: PaymentDeps, ctx: RequestContext, id: string): Promise<CheckoutSession> {
  return ctx.write(async (tx) => {
    // Read once, locked; another account's session is refused before anything is changed.
    const row = ownCheckoutSession(await lockCheckoutSessionAndPayment(tx, deps.store.engine, id), ctx);
    if (row.status === 'expired') throw invalidState('This checkout session has already expired.');
    if (row.status === 'complete') throw invalidState('This checkout session is complete: its payment was approved. Refund the payment instead.');
    const result = await expireNow(tx, row, ctx.clock.nowMs());
    if (result === 'busy') throw invalidState('A card payment of this session is being confirmed; try again in a few seconds.');
    return toCheckoutSession(result);
  });
}

// Worker: the session's expiry time has come.
export async function expireCheckoutSessionJob(deps: PaymentDeps, job: JobRow, workerId: string): Promise<void> {
  const { sessionId } = readPayload(job, JOB_CHECKOUT_EXPIRE);
  await deps.store.write(async (tx) => {
    const nowMs = deps.store.clock.nowMs();
    const row = await lockCheckoutSessionAndPayment(tx, deps.store.engine, sessionId);
    if (!row || row.status !== 'open') return void (await complete(tx, job, workerId));
    if (row.expires_at_ms > nowMs) return reschedule(tx, job, workerId, row.expires_at_ms, null);
    const result = await expireNow(tx, row, nowMs);
    if (result === 'busy') return reschedule(tx, job, workerId, nowMs + EXPIRY_RETRY_MS, 'a card payment is being confirmed');
    await complete(tx, job, workerId);
  });
}

// ----------------------------------------------------------------------------------------------
// The hosted page's API (authorized by the session's client secret; see plugins/auth.ts).

async function clientView(db: Store['db'] | Tx, row: CheckoutSessionRow, payment: PaymentRow | undefined, platformName: string, cardEncryption: CardClientEncryption | null): Promise<CheckoutSessionClientView> {
  const account = await db.selectFrom('accounts').select('name').where('id', '=', row.account_id).executeTakeFirstOrThrow();
  const branding = await brandingForPage(db, row.account_id);
  return {
    id: row.id,
    object: 'checkout_session.client',
    status: row.status as CheckoutSessionClientView['status'],
    amount: row.amount,
    currency: 'BRL',
    description: row.description,
    merchantName: branding.displayName ?? account.name,
    logoUrl: branding.logoUrl,
    accentColor: branding.accentColor,
    platformName,
    methods: JSON.parse(row.methods) as CheckoutMethod[],
    installments: row.installments,
    installmentPlans: installmentPlans(row.amount, row.installments),
    expiresAt: row.expires_at,
    livemode: row.livemode === 1,
    successUrl: row.success_url,
    cancelUrl: row.cancel_url,
    payment: payment ? {
      id: payment.id,
      method: payment.method as CheckoutMethod,
      status: payment.status,
      failureMessage: payment.failure_message,
      pix: payment.method === 'pix' && payment.pix_copy_paste
        ? { copyPaste: payment.pix_copy_paste, qrCodeSvg: qrSvg(payment.pix_copy_paste), expiresAt: payment.expires_at ?? row.expires_at, txid: payment.provider_txid ?? null, endToEndId: payment.provider_e2eid ?? null }
        : null,
      nextAction: toPayment(payment).nextAction,
    } : null,
    cardEncryption,
  };
}

// Live mode with a card acquirer that encrypts in the browser: what the page needs for it.
function cardEncryptionOf(deps: PaymentDeps, row: CheckoutSessionRow): Promise<CardClientEncryption | null> {
  return deps.connectors.cardClientEncryption(deps.store.db, { accountId: row.account_id, livemode: row.livemode === 1 });
}

// A session and its payment change together (an approval completes the session in its own
// transaction, an expiry expires the pending Pix with the session), but they are two reads here,
// and a commit can fall between them: the page would see an approved payment on an open session
// (seen on PostgreSQL). So the session is read again after its payment, and the pair is read
// again if the session moved in between; a session moves a handful of times in its life.
const MAX_VIEW_READS = 3;
export async function getClientView(deps: PaymentDeps, owner: Owner, id: string): Promise<CheckoutSessionClientView> {
  const { db } = deps.store;
  let row = await expireIfDue(deps.store, await loadCheckoutSession(db, owner, id));
  for (let reads = 1; ; reads++) {
    const payment = await latestPayment(db, row);
    const again = await loadCheckoutSession(db, owner, id);
    const moved = again.status !== row.status || again.payment_id !== row.payment_id || again.updated_at !== row.updated_at;
    if (!moved || reads === MAX_VIEW_READS) return clientView(db, row, payment, deps.config.platformName, await cardEncryptionOf(deps, row));
    row = again;
  }
}

const inFlight = () => invalidState('A payment of this checkout session is already being processed; wait for its result.');

// The buyer pays. At most one payment per session is pending or approved: checked here under the
// session's lock, and enforced by the store (payments_one_live_per_checkout), so that no
// interleaving of tabs, double clicks and retries makes a second one. A second Pix request while
// one is pending gets that same Pix; a declined or failed card leaves room for another try.
export async function payCheckoutSession(deps: PaymentDeps, ctx: RequestContext, id: string, body: CheckoutPayRequest): Promise<CheckoutSessionClientView> {
  const session = await loadCheckoutSession(deps.store.db, ctx, id);
  const methods = JSON.parse(session.methods) as CheckoutMethod[];
  if (!methods.includes(body.method)) throw new ApiError('VALIDATION_ERROR', `This checkout session does not take ${body.method}; it takes ${methods.join(', ')}.`, { param: 'method' });
  const installments = body.method === 'credit_card' ? body.installments ?? 1 : undefined;
  if (installments !== undefined && installments > session.installments) {
    throw new ApiError('VALIDATION_ERROR', `This checkout session allows at most ${session.installments} installment(s).`, { param: 'installments' });
  }
  const nowMs = ctx.clock.nowMs();
  const common = { amount: session.amount, currency: 'BRL' as const, description: session.description ?? undefined, metadata: session.metadata ? (JSON.parse(session.metadata) as CreatePaymentBody['metadata']) : undefined, customer: session.customer ? (JSON.parse(session.customer) as CreatePaymentBody['customer']) : undefined };
  const prepared = body.method === 'credit_card'
    ? preparePayment(deps, ctx, { ...common, method: 'credit_card', cardToken: body.cardToken, installments }, id)
    // The BR Code expires with the session (or sooner, at the configured Pix expiry).
    : preparePayment(deps, ctx, { ...common, method: 'pix', pixExpiresInSeconds: Math.max(1, Math.min(deps.config.pixExpiresInSeconds, Math.floor((session.expires_at_ms - nowMs) / 1000))) }, id);
  // Live mode: the charge at the PSP first (or a refusal, with nothing written).
  await chargeAtProvider(deps, ctx, prepared);
  const encryption = await cardEncryptionOf(deps, session);
  // A live card at an acquirer: after 3-D Secure the buyer comes back to this page.
  if (body.method === 'credit_card' && prepared.row.connector_account_id && deps.config.publicUrl) prepared.row.return_url = `${deps.config.publicUrl.replace(/\/+$/, '')}/checkout/${id}`;
  let created = false;
  let view: CheckoutSessionClientView;
  try {
    view = await ctx.write(async (tx) => {
      const row = await lockCheckoutSession(tx, deps.store.engine, id) as CheckoutSessionRow;
      if (row.status !== 'open') throw invalidState(`This checkout session is ${row.status}.`);
      if (row.expires_at_ms <= ctx.clock.nowMs()) throw invalidState('This checkout session has expired.');
      const current = await latestPayment(tx, row);
      if (current && current.status !== 'declined' && current.status !== 'failed' && current.status !== 'canceled' && current.status !== 'expired') {
        if (current.status === 'pending' && current.method === 'pix' && body.method === 'pix') return clientView(tx, row, current, deps.config.platformName, encryption);
        // The buyer went back from the Pix code to the card form: the Pix stayed valid until now,
        // and a card payment replaces it. It is canceled in this transaction, before the card's
        // payment exists, so the session never has two live payments (a Pix paid after this is
        // refused by its state, as any canceled Pix).
        if (current.status === 'pending' && current.method === 'pix' && body.method === 'credit_card') await moveWithEvent(tx, current, 'canceled', ctx.clock.nowMs());
        else throw inFlight();
      }
      await insertPayment(tx, ctx, prepared);
      const nowIso = new Date(ctx.clock.nowMs()).toISOString();
      await tx.updateTable('checkout_sessions').set({ payment_id: prepared.row.id, updated_at: nowIso }).where('id', '=', id).execute();
      created = true;
      return clientView(tx, { ...row, payment_id: prepared.row.id, updated_at: nowIso }, prepared.row, deps.config.platformName, encryption);
    });
  } catch (error) {
    // The store's own guard: another payment of this session is pending or approved.
    if (isUniqueViolation(error)) throw inFlight();
    throw error;
  }
  if (created && body.method === 'credit_card') deps.kickWorker();
  return view;
}

