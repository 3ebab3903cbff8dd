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
import { defer, selectWhere, updateWhere } from '../../store/index.js';
import { createSaleReceivables } from '../receivables/service.js';
import { enqueue, complete, completeAll, reschedule, type JobRow } from '../../jobs/queue.js';
import { emitEvents, recordEvent, type Owner } from '../events/service.js';
import { paginate } from '../../http/pagination.js';
import { ProviderUnavailable, type AuthorizeResult, type PaymentProvider } from '../../providers/port.js';
import { activeRules } from '../receivables/service.js';
import type { SplitRule } from '../../domain/split.js';
import type { AccountSettings } from '../accounts/settings.js';
import type { CircuitBreaker } from '../../providers/breaker.js';
import type { CreatePaymentBody, CreatePaymentFields, ListPaymentsQuery, Payment } from './schemas.js';
import { checkTransition, loadPayment, toPayment, transition, type PaymentRow } from './repository.js';
import { invalidState } from '../../errors.js';
import { sql } from 'kysely';

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
  const amountCents = checkPaymentShape(body);
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
    await defer(tx, 'payments', [row]);
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
  const scope = deps.store.db.selectFrom('payments').selectAll()
    .where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0);
  let qb = scope;
  if (query.status) qb = qb.where('status', '=', query.status);
  if (query.method) qb = qb.where('method', '=', query.method);
  return paginate(qb, query, toPayment, scope);
}

async function moveWithEvent(tx: Tx, row: PaymentRow, to: 'approved' | 'declined' | 'failed' | 'canceled' | 'expired', changes: Partial<PaymentRow> = {}): Promise<Payment> {
  const moved = toPayment(await transition(tx, row, to, changes));
  await recordEvent(tx, { accountId: row.account_id, livemode: row.livemode === 1 }, `payment.${to}`, moved);
  return moved;
}

// What approvals in one transaction share: each account's settings and each owner's split rules
// are read once.
export interface ApprovalMemo {
  settings: Map<string, AccountSettings>;
  rules: Map<string, SplitRule[]>;
}

// Approval is one transaction: the status move, its fee and net, the receivables of the split
// and their events. The guarded UPDATE in transition() makes a second approval impossible, and
// the receivables' unique (source_id, line) key would refuse a second set anyway.
async function approve(tx: Tx, row: PaymentRow, changes: Partial<PaymentRow>, memo?: ApprovalMemo, later?: LaterWrites): Promise<Payment> {
  let settings = memo?.settings.get(row.account_id);
  if (!settings) {
    const [account] = await selectWhere(tx, 'accounts', ['settings'], { id: row.account_id });
    settings = parseSettings(account.settings);
    memo?.settings.set(row.account_id, settings);
  }
  const method = row.method as PaymentMethod;
  const { feeCents, netCents } = computeFee(row.amount, method, settings.fees);
  const nowMs = Date.now();
  const owner = { accountId: row.account_id, livemode: row.livemode === 1 };
  let rules: SplitRule[] | undefined;
  if (memo) {
    const ownerKey = `${row.account_id}:${row.livemode}`;
    rules = memo.rules.get(ownerKey);
    if (!rules) {
      rules = await activeRules(tx, owner);
      memo.rules.set(ownerKey, rules);
    }
  }
  const moved = { ...changes, fee_amount: feeCents, net_amount: netCents };
  const approved = toPayment(later ? later.approve(row, moved) : await transition(tx, row, 'approved', moved));
  const receivables = await createSaleReceivables(tx, { paymentId: row.id, ...owner, amountCents: row.amount, netCents, method }, settings, nowMs, rules);
  await emitEvents(tx, owner, [
    { type: 'payment.approved', object: approved },
    ...receivables.map((r) => ({ type: 'receivable.created' as const, object: r })),
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

// The job runs again after the provider backoff (its lease released).
function retryLater(deps: PaymentDeps, tx: Tx, job: JobRow, workerId: string, reason: string): Promise<void> {
  return reschedule(tx, job, workerId, Date.now() + backoffMs(deps.config.providerRetryBaseMs, job.attempts), reason);
}

function providerKey(paymentId: string, operation: string): string {
  return createHash('sha256').update(`${paymentId}:${operation}`).digest('hex').slice(0, 40);
}

type Authorization = { kind: 'answer'; outcome: AuthorizeResult } | { kind: 'unavailable'; error: ProviderUnavailable };

// The provider call of a confirmation. Its key is derived from the payment, so a retry (or a
// second worker) can never make a second charge.
async function authorizeCard(deps: PaymentDeps, current: PaymentRow): Promise<Authorization> {
  try {
    const outcome = await deps.provider.authorize({
      idempotencyKey: providerKey(current.id, 'authorize'),
      amountCents: current.amount,
      currency: 'BRL',
      cardToken: current.card_token ?? '',
      installments: current.installments ?? 1,
      livemode: current.livemode === 1,
    });
    deps.breaker.recordSuccess();
    return { kind: 'answer', outcome };
  } catch (error) {
    if (!(error instanceof ProviderUnavailable)) throw error;
    deps.breaker.recordFailure();
    return { kind: 'unavailable', error };
  }
}

// The approvals and job completions of a batch of confirmations, written together at its end:
// one guarded multi-row UPDATE and one DELETE instead of a round trip each (PostgreSQL).
class LaterWrites {
  private readonly approvals: Array<{ id: string; changes: Partial<PaymentRow> }> = [];
  private readonly jobIds: string[] = [];
  private readonly nowIso = new Date().toISOString();

  approve(row: PaymentRow, changes: Partial<PaymentRow>): PaymentRow {
    checkTransition(row, 'approved');
    this.approvals.push({ id: row.id, changes });
    return { ...row, ...changes, status: 'approved', updated_at: this.nowIso };
  }

  complete(job: JobRow): void {
    this.jobIds.push(job.id);
  }

  async write(tx: Tx, engine: 'sqlite' | 'postgres', workerId: string): Promise<void> {
    if (this.approvals.length > 0) {
      let updated = 0;
      if (engine === 'sqlite') {
        // Local statements: one each costs no round trip.
        for (const a of this.approvals) {
          updated += await updateWhere(tx, 'payments', { ...a.changes, status: 'approved', updated_at: this.nowIso }, { id: a.id, status: 'pending' });
        }
      } else {
        const values = this.approvals.map((a) => sql`(${a.id}::text, ${a.changes.provider_charge_id ?? null}::text, ${a.changes.provider_attempts ?? 0}::integer, ${a.changes.fee_amount ?? null}::bigint, ${a.changes.net_amount ?? null}::bigint)`);
        const { rows } = await sql<{ id: string }>`update payments as p set status = 'approved', updated_at = ${this.nowIso}, provider_charge_id = v.charge, provider_attempts = v.attempts, fee_amount = v.fee, net_amount = v.net
          from (values ${sql.join(values)}) as v(id, charge, attempts, fee, net)
          where p.id = v.id and p.status = 'pending' returning p.id`.execute(tx);
        updated = rows.length;
      }
      // Guarded by the status read in this transaction: a payment that moved meanwhile fails the
      // whole batch, whose jobs then run one by one.
      if (updated !== this.approvals.length) throw invalidState('A payment changed while its confirmation was being saved.');
    }
    await completeAll(tx, this.jobIds, workerId);
  }
}

// Persists what the provider said, with the job's completion, inside the caller's transaction.
// Returns false when the payment had already moved on (canceled while the provider approved).
async function persistAuthorization(deps: PaymentDeps, tx: Tx, job: JobRow, workerId: string, row: PaymentRow, auth: Authorization, memo?: ApprovalMemo, later?: LaterWrites): Promise<boolean> {
  const finish = () => (later ? later.complete(job) : complete(tx, job, workerId));
  if (row.status !== 'pending') {
    if (auth.kind === 'unavailable' && row.status === 'canceled') {
      // Canceled while a call with no answer was out: it may have charged. The job runs again
      // and asks (mayHaveCharged).
      await retryLater(deps, tx, job, workerId, auth.error.message);
      return false;
    }
    // An approval the payment can no longer take keeps its job until the caller has voided it
    // (voidUnwanted): if the void fails, a later attempt of the job voids it.
    if (!isApproval(auth)) await finish();
    return false;
  }
  const attempts = { provider_attempts: job.attempts };
  if (auth.kind === 'unavailable') {
    if (job.attempts >= deps.config.providerMaxAttempts) {
      await moveWithEvent(tx, row, 'failed', { failure_code: 'provider_unavailable', failure_message: 'The payment provider could not be reached; no charge was made.', ...attempts });
      await finish();
    } else {
      await tx.updateTable('payments').set(attempts).where('id', '=', row.id).execute();
      await retryLater(deps, tx, job, workerId, auth.error.message);
    }
    return true;
  }
  const { outcome } = auth;
  if (outcome.status === 'approved') await approve(tx, row, { provider_charge_id: outcome.chargeId, ...attempts }, memo, later);
  else await moveWithEvent(tx, row, 'declined', { failure_code: outcome.code, failure_message: outcome.message, ...attempts });
  await finish();
  return true;
}

function isApproval(auth: Authorization): auth is { kind: 'answer'; outcome: { status: 'approved'; chargeId: string } } {
  return auth.kind === 'answer' && auth.outcome.status === 'approved';
}

// An approval the payment could not take (canceled while the provider was approving, or before
// the retry of a call whose answer was lost): give it back, then let the job go, in that order.
// If the void fails, the job stays and runs again later (backoff), and that attempt voids it.
async function voidUnwanted(deps: PaymentDeps, job: JobRow, workerId: string, paymentId: string, auth: Authorization, honoured: boolean): Promise<void> {
  if (honoured || !isApproval(auth)) return;
  try {
    await deps.provider.void({ idempotencyKey: providerKey(paymentId, 'void'), chargeId: auth.outcome.chargeId });
  } catch (error) {
    await deps.store.write((tx) => retryLater(deps, tx, job, workerId, `void failed: ${(error as Error).message ?? String(error)}`));
    return;
  }
  await deps.store.write((tx) => complete(tx, job, workerId));
}

// A confirmation whose job ran before (a lost answer, a failed write, a worker that died) may
// have charged the card even though nothing of it was recorded. Finding its payment canceled,
// it asks the provider again under the same key (the earlier call's answer, never a second
// charge) so that an authorization made then is voided rather than forgotten.
function mayHaveCharged(job: JobRow, row: PaymentRow): boolean {
  return row.status === 'canceled' && (job.attempts > 1 || row.provider_attempts > 0);
}

// Worker: confirm a card payment with the provider. Validate, load, call (the claim that
// leased this job is already persisted), persist the result with its event and the job's
// completion in one transaction.
export async function confirmCardJob(deps: PaymentDeps, job: JobRow, workerId: string): Promise<void> {
  const { store } = deps;
  const { paymentId } = JSON.parse(job.payload) as { paymentId: string };
  const [current] = await selectWhere(store.db, 'payments', '*', { id: paymentId });
  if (current && mayHaveCharged(job, current)) {
    const auth = await authorizeCard(deps, current);
    // Still no answer: the worker retries the job with backoff.
    if (auth.kind === 'unavailable') throw auth.error;
    if (isApproval(auth)) return voidUnwanted(deps, job, workerId, paymentId, auth, false);
  }
  if (!current || current.status !== 'pending') {
    await store.write((tx) => complete(tx, job, workerId));
    return;
  }
  const auth = await authorizeCard(deps, current);
  const honoured = await persistAlone(deps, job, workerId, paymentId, auth);
  await voidUnwanted(deps, job, workerId, paymentId, auth, honoured);
}

// One job's result in its own transaction, its payment read again there (locked). Without an
// answer (the payment was not pending before the call), the job is only completed.
function persistAlone(deps: PaymentDeps, job: JobRow, workerId: string, paymentId: string, auth: Authorization | null): Promise<boolean> {
  return deps.store.write(async (tx) => {
    const row = await lockPayment(tx, deps.store.engine, paymentId);
    if (!row || !auth) {
      await complete(tx, job, workerId);
      return false;
    }
    return persistAuthorization(deps, tx, job, workerId, row, auth);
  });
}

// The payment a confirmation is about to write, read inside its transaction; locked on
// PostgreSQL so that a cancel cannot slip in between this read and the guarded UPDATE (SQLite
// has one writer: nothing can).
async function lockPayment(tx: Tx, engine: Store['engine'], id: string): Promise<PaymentRow | undefined> {
  if (engine === 'sqlite') return (await selectWhere(tx, 'payments', '*', { id }))[0];
  return tx.selectFrom('payments').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

// The same for the jobs of one claim together: one read of their payments, the provider calls
// side by side, then one transaction for all the results (one read of each account's settings
// and split rules). If that transaction fails as a whole (a payment that moved meanwhile, say),
// the worker runs each job the single way above, whose provider call repeats under the same key:
// the same answer, never a second charge.
export async function confirmCardJobs(deps: PaymentDeps, jobs: JobRow[], workerId: string): Promise<void> {
  if (jobs.length === 1) return confirmCardJob(deps, jobs[0], workerId);
  const { store } = deps;
  const paymentIds = jobs.map((job) => (JSON.parse(job.payload) as { paymentId: string }).paymentId);
  const currents = new Map((await store.db.selectFrom('payments').selectAll().where('id', 'in', paymentIds).execute()).map((r) => [r.id, r]));
  const auths = await Promise.all(paymentIds.map(async (id) => {
    const current = currents.get(id);
    return current && current.status === 'pending' ? authorizeCard(deps, current) : null;
  }));
  // Throws as a whole: the worker then runs each job alone (jobs/worker.ts).
  // The rows read above are not read again inside the transaction: every move below is a
  // guarded UPDATE (status still 'pending'), so a payment that moved meanwhile (canceled while
  // the provider approved it, say) fails the whole transaction.
  let honoured: boolean[];
  try {
    honoured = await store.write(async (tx) => {
      const memo: ApprovalMemo = { settings: new Map(), rules: new Map() };
      const later = new LaterWrites();
      const done: boolean[] = [];
      for (let i = 0; i < jobs.length; i++) {
        const row = currents.get(paymentIds[i]);
        const auth = auths[i];
        if (!row || !auth) {
          later.complete(jobs[i]);
          done.push(false);
        } else {
          done.push(await persistAuthorization(deps, tx, jobs[i], workerId, row, auth, memo, later));
        }
      }
      await later.write(tx, store.engine, workerId);
      return done;
    });
  } catch {
    // Then each job alone, with the provider's answer already in hand (the provider is not
    // called again), its payment read again inside its own transaction: an approval the payment
    // can no longer take is voided below. (Had we left this to the worker's one-by-one retry, a
    // payment found canceled there would never see its authorization voided.)
    honoured = [];
    for (let i = 0; i < jobs.length; i++) honoured.push(await persistAlone(deps, jobs[i], workerId, paymentIds[i], auths[i]));
  }
  for (let i = 0; i < jobs.length; i++) {
    const auth = auths[i];
    if (auth) await voidUnwanted(deps, jobs[i], workerId, paymentIds[i], auth, honoured[i]);
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
