import { createHash } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Store, Tx } from '../../store/index.js';
import type { CircuitBreaker } from '../../providers/breaker.js';
import type { ConnectorRegistry } from '../../providers/registry.js';
import type { Clock } from '../../clock.js';
import type { AuthorizeResult, PaymentProvider, ProviderUnavailable } from '../../providers/port.js';
import { recordEvent } from '../events/service.js';
import { reschedule, type JobRow } from '../../jobs/queue.js';
import type { JobType } from '../../jobs/payloads.js';
import { toPayment, transition, type PaymentRow } from './repository.js';
import type { Payment } from './schemas.js';

// What the payment operations share. Each operation has its own file, in the same steps:
// validate, load, persist, call the provider, persist (create.ts, confirm.ts, approve.ts,
// cancel.ts, expire.ts); all their SQL is in repository.ts.

export const JOB_CONFIRM = 'payment.confirm' satisfies JobType;
export const JOB_EXPIRE = 'payment.expire' satisfies JobType;

export interface PaymentDeps {
  store: Store;
  config: Config;
  provider: PaymentProvider;
  // Wakes the in-process worker so a card payment is confirmed "a moment later", not at the
  // next poll.
  kickWorker: () => void;
  breaker: CircuitBreaker;
  // Live (and homologation) providers, resolved per (merchant account, mode, method).
  connectors: ConnectorRegistry;
  clock: Clock;
}

// The provider's answer to an authorization, or none (it could not be reached).
export type Authorization = { kind: 'answer'; outcome: AuthorizeResult } | { kind: 'unavailable'; error: ProviderUnavailable };

export function isApproval(auth: Authorization): auth is { kind: 'answer'; outcome: { status: 'approved'; chargeId: string } } {
  return auth.kind === 'answer' && auth.outcome.status === 'approved';
}

// Provider keys are derived from the payment, so a retry (or a second worker) repeats the same
// call: never a second charge or a second void.
export function providerKey(paymentId: string, operation: string): string {
  return createHash('sha256').update(`${paymentId}:${operation}`).digest('hex').slice(0, 40);
}

// A move along the state table with its event, in the caller's transaction.
// `nowMs` from the caller's Clock.
export async function moveWithEvent(tx: Tx, row: PaymentRow, to: 'requires_action' | 'requires_capture' | 'approved' | 'declined' | 'failed' | 'canceled' | 'expired', nowMs: number, changes: Partial<PaymentRow> = {}): Promise<Payment> {
  const moved = toPayment(await transition(tx, row, to, changes, new Date(nowMs).toISOString()));
  await recordEvent(tx, { accountId: row.account_id, livemode: row.livemode === 1 }, `payment.${to}`, moved, nowMs);
  return moved;
}

function backoffMs(baseMs: number, attempt: number): number {
  // Exponential with ±20% jitter so retries from many payments do not arrive in lockstep.
  const raw = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), 3_600_000);
  return Math.round(raw * (0.8 + Math.random() * 0.4));
}

// The job runs again after the provider backoff (its lease released).
export function retryLater(deps: PaymentDeps, tx: Tx, job: JobRow, workerId: string, reason: string): Promise<void> {
  return reschedule(tx, job, workerId, deps.store.clock.nowMs() + backoffMs(deps.config.providerRetryBaseMs, job.attempts), reason);
}
