import type { Selectable } from 'kysely';
import type { Store, Tx } from '../../store/index.js';
import type { CheckoutSessionsTable } from '../../store/schema.js';
import type { Owner } from '../events/service.js';
import { recordEvent } from '../events/service.js';
import { notFound } from '../../errors.js';
import { selectWhere } from '../../store/index.js';
import { readPayment } from '../payments/repository.js';
import type { CheckoutMethod, CheckoutSession, CheckoutStatus } from './schemas.js';

// Checkout sessions in the store. Only this file and the service write them. Kept free of the
// payments service (which calls completeCheckoutSession when it approves a payment); payments
// are read through the payments repository only.

export type CheckoutSessionRow = Selectable<CheckoutSessionsTable>;

export function toCheckoutSession(row: CheckoutSessionRow): CheckoutSession {
  const open = row.status === 'open';
  return {
    id: row.id,
    object: 'checkout_session',
    status: row.status as CheckoutStatus,
    amount: row.amount,
    currency: 'BRL',
    methods: JSON.parse(row.methods) as CheckoutMethod[],
    description: row.description,
    metadata: row.metadata ? JSON.parse(row.metadata) : {},
    customer: row.customer ? (JSON.parse(row.customer) as CheckoutSession['customer']) : null,
    installments: row.installments,
    successUrl: row.success_url,
    cancelUrl: row.cancel_url,
    // The secret only while it can still be used to pay; a finished session (and so every
    // checkout_session.* event) carries none.
    url: open ? `${row.base_url}/checkout/${row.id}#${row.client_secret}` : `${row.base_url}/checkout/${row.id}`,
    clientSecret: open ? row.client_secret : null,
    paymentId: row.payment_id,
    expiresAt: row.expires_at,
    livemode: row.livemode === 1,
    createdAt: row.created_at,
    completedAt: row.completed_at,
    expiredAt: row.expired_at,
  };
}

const ownedBy = (row: CheckoutSessionRow, owner: Owner) => row.account_id === owner.accountId && row.livemode === (owner.livemode ? 1 : 0);

export async function findCheckoutSession(db: Store['db'] | Tx, owner: Owner, id: string): Promise<CheckoutSessionRow | undefined> {
  const [row] = await selectWhere(db, 'checkout_sessions', '*', { id });
  if (!row || !ownedBy(row, owner)) return undefined;
  return row;
}

// The session as read (or locked) if it is the owner's; another account's or the other mode's
// session is as absent as a made-up id.
export function ownCheckoutSession(row: CheckoutSessionRow | undefined, owner: Owner): CheckoutSessionRow {
  if (!row || !ownedBy(row, owner)) throw notFound('checkout session', 'id');
  return row;
}

export async function loadCheckoutSession(db: Store['db'] | Tx, owner: Owner, id: string): Promise<CheckoutSessionRow> {
  return ownCheckoutSession(await findCheckoutSession(db, owner, id), owner);
}

// Read inside a write: locked on PostgreSQL, so that two pays (or a pay and an expiry) of one
// session take turns (SQLite has one writer: they do anyway).
export async function lockCheckoutSession(tx: Tx, engine: Store['engine'], id: string): Promise<CheckoutSessionRow | undefined> {
  if (engine === 'sqlite') return (await selectWhere(tx, 'checkout_sessions', '*', { id }))[0];
  return tx.selectFrom('checkout_sessions').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

// For a change that may move the session's payment too (expiry): on PostgreSQL its latest
// payment is locked before the session, in the order an approval takes them (the payment, then
// its session), so that an expiry and an approval of one session wait for each other instead of
// deadlocking.
export async function lockCheckoutSessionAndPayment(tx: Tx, engine: Store['engine'], id: string): Promise<CheckoutSessionRow | undefined> {
  if (engine === 'sqlite') return lockCheckoutSession(tx, engine, id);
  const peek = await tx.selectFrom('checkout_sessions').select('payment_id').where('id', '=', id).executeTakeFirst();
  if (peek?.payment_id) await readPayment(tx, peek.payment_id, { lockOn: engine });
  return lockCheckoutSession(tx, engine, id);
}

// Called in the transaction that approves a payment made in a session: the session becomes
// complete with it, and checkout_session.completed is written with the change. Guarded by
// `status = 'open'`: a session completes once. (A session cannot be expired while a card
// payment is in flight, and its pending Pix expires with it, so an approval never finds it
// expired.)
export async function completeCheckoutSession(tx: Tx, sessionId: string, paymentId: string, nowMs: number): Promise<void> {
  const nowIso = new Date(nowMs).toISOString();
  const rows = await tx.updateTable('checkout_sessions')
    .set({ status: 'complete', payment_id: paymentId, completed_at: nowIso, updated_at: nowIso })
    .where('id', '=', sessionId).where('status', '=', 'open')
    .returningAll().execute();
  if (rows.length !== 1) return;
  const row = rows[0];
  await recordEvent(tx, { accountId: row.account_id, livemode: row.livemode === 1 }, 'checkout_session.completed', toCheckoutSession(row), nowMs);
}

// Marks an open session expired, with its event, in the caller's transaction (the caller has
// expired its pending Pix, if any, first).
export async function markExpired(tx: Tx, row: CheckoutSessionRow, nowMs: number): Promise<CheckoutSessionRow> {
  const nowIso = new Date(nowMs).toISOString();
  const rows = await tx.updateTable('checkout_sessions')
    .set({ status: 'expired', expired_at: nowIso, updated_at: nowIso })
    .where('id', '=', row.id).where('status', '=', 'open')
    .returningAll().execute();
  if (rows.length !== 1) return row;
  const expired = rows[0];
  await recordEvent(tx, { accountId: row.account_id, livemode: row.livemode === 1 }, 'checkout_session.expired', toCheckoutSession(expired), nowMs);
  return expired;
}
