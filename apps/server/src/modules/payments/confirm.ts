import type { Tx } from '../../store/index.js';
import { complete, type JobRow } from '../../jobs/queue.js';
import { ProviderUnavailable } from '../../providers/port.js';
import { ApprovalBatch, approve, voidUnwanted, type ApprovalMemo } from './approve.js';
import { JOB_CONFIRM, isApproval, moveWithEvent, providerKey, retryLater, type Authorization, type PaymentDeps } from './common.js';
import { readPayload } from '../../jobs/payloads.js';
import { readPayment, readPayments, recordProviderAttempts, type PaymentRow } from './repository.js';
import { authorizeAtAcquirer, requireAction } from './live-card.js';

// The confirmation job of a card payment: validate (the job's payload), load (the payment),
// call the provider (the claim that leased the job is already persisted), persist the result
// with its event and the job's completion in one transaction; void an approval the payment can
// no longer take (approve.ts).

// The provider call of a confirmation. Its key is derived from the payment, so a retry (or a
// second worker) can never make a second charge.
async function authorizeCard(deps: PaymentDeps, current: PaymentRow): Promise<Authorization> {
  try {
    // A live (or homologation) card payment at its acquirer; else the in-house sandbox.
    const outcome = current.connector_account_id ? await authorizeAtAcquirer(deps, current) : await deps.provider.authorize({
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
    deps.breaker.recordFailure(deps.store.clock.nowMs());
    return { kind: 'unavailable', error };
  }
}

// Persists what the provider said, with the job's completion, inside the caller's transaction.
// Returns false when the payment had already moved on (canceled while the provider approved).
async function persistAuthorization(deps: PaymentDeps, tx: Tx, job: JobRow, workerId: string, row: PaymentRow, auth: Authorization, memo?: ApprovalMemo, later?: ApprovalBatch): Promise<boolean> {
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
      await moveWithEvent(tx, row, 'failed', deps.store.clock.nowMs(), { failure_code: 'provider_unavailable', failure_message: 'The payment provider could not be reached; no charge was made.', ...attempts });
      await finish();
    } else {
      await recordProviderAttempts(tx, row.id, job.attempts);
      await retryLater(deps, tx, job, workerId, auth.error.message);
    }
    return true;
  }
  const { outcome } = auth;
  const nowMs = deps.store.clock.nowMs();
  switch (outcome.status) {
    case 'approved':
      await approve(tx, row, { provider_charge_id: outcome.chargeId, ...attempts }, nowMs, memo, later);
      break;
    case 'declined':
      await moveWithEvent(tx, row, 'declined', nowMs, { failure_code: outcome.code, failure_message: outcome.message, provider_charge_id: outcome.chargeId ?? null, ...attempts });
      break;
    case 'failed':
      await moveWithEvent(tx, row, 'failed', nowMs, { failure_code: outcome.code, failure_message: outcome.message, provider_charge_id: outcome.chargeId, ...attempts });
      break;
    case 'canceled':
      await moveWithEvent(tx, row, 'canceled', nowMs, { provider_charge_id: outcome.chargeId, ...attempts });
      break;
    case 'pending':
      // The acquirer decides later: its notification (or reconciliation) finishes the payment.
      await tx.updateTable('payments').set({ provider_charge_id: outcome.chargeId, ...attempts }).where('id', '=', row.id).where('status', '=', 'pending').execute();
      break;
    case 'requires_action':
      await requireAction(tx, row, outcome, nowMs, attempts);
      break;
  }
  await finish();
  return true;
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
  const { paymentId } = readPayload(job, JOB_CONFIRM);
  const current = await readPayment(store.db, paymentId);
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
    const row = await readPayment(tx, paymentId, { lockOn: deps.store.engine });
    if (!row || !auth) {
      await complete(tx, job, workerId);
      return false;
    }
    return persistAuthorization(deps, tx, job, workerId, row, auth);
  });
}

// The same for the jobs of one claim together: one read of their payments, the provider calls
// side by side, then one transaction for all the results (one read of each account's settings
// and split rules). If that transaction fails as a whole (a payment that moved meanwhile, say),
// each job's result is written in a transaction of its own, with the provider's answer already
// in hand: the provider is not called again (the catch below). Only if this function throws
// does the worker run each job the single way above, whose provider call repeats under the same
// key: the same answer, never a second charge.
export async function confirmCardJobs(deps: PaymentDeps, jobs: JobRow[], workerId: string): Promise<void> {
  if (jobs.length === 1) return confirmCardJob(deps, jobs[0], workerId);
  const { store } = deps;
  const paymentIds = jobs.map((job) => readPayload(job, JOB_CONFIRM).paymentId);
  const currents = await readPayments(store.db, paymentIds);
  const auths = await Promise.all(paymentIds.map(async (id) => {
    const current = currents.get(id);
    return current && current.status === 'pending' ? authorizeCard(deps, current) : null;
  }));
  // Fails as a whole: the catch below then writes each job's result alone.
  // The rows read above are not read again inside the transaction: every move below is a
  // guarded UPDATE (status still 'pending'), so a payment that moved meanwhile (canceled while
  // the provider approved it, say) fails the whole transaction.
  let honoured: boolean[];
  try {
    honoured = await store.write(async (tx) => {
      const memo: ApprovalMemo = { settings: new Map(), rules: new Map() };
      const later = new ApprovalBatch(store.clock.nowMs());
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
