import { sql, type Selectable } from 'kysely';
import type { PaymentsTable } from '../../store/schema.js';
import type { Engine, Store, Tx } from '../../store/index.js';
import type { ListPaymentsQuery, Payment } from './schemas.js';
import { paginate } from '../../http/pagination.js';
import { parseSettings, type AccountSettings } from '../accounts/settings.js';
import { qrSvg } from '../../domain/qr.js';
import { assertTransition, IllegalTransition, type PaymentStatus } from '../../domain/states.js';
import { invalidState, notFound } from '../../errors.js';
import type { Owner } from '../events/service.js';
import { defer, MicroBatch, selectWhere, updateWhere } from '../../store/index.js';

export type PaymentRow = Selectable<PaymentsTable>;

export function toPayment(row: PaymentRow): Payment {
  return {
    id: row.id,
    object: 'payment',
    status: row.status as PaymentStatus,
    amount: row.amount,
    currency: 'BRL',
    method: row.method as Payment['method'],
    description: row.description,
    metadata: row.metadata ? JSON.parse(row.metadata) : {},
    customer: row.customer ? (JSON.parse(row.customer) as Payment['customer']) : null,
    installments: row.installments,
    card: row.card_brand ? { brand: row.card_brand, last4: row.card_last4 ?? '' } : null,
    pix: row.pix_copy_paste ? { copyPaste: row.pix_copy_paste, qrCodeSvg: qrSvg(row.pix_copy_paste), expiresAt: row.expires_at ?? '', txid: row.provider_txid ?? null, endToEndId: row.provider_e2eid ?? null } : null,
    failure: row.failure_code ? { code: row.failure_code, message: row.failure_message ?? '' } : null,
    nextAction: row.status === 'requires_action' && row.next_action ? toNextAction(row.next_action, row.action_expires_at, row.return_url) : null,
    returnUrl: row.return_url,
    capture: row.capture_method === 'manual' ? { method: 'manual', status: (row.capture_status ?? 'pending') as 'pending' | 'processing' | 'succeeded' | 'failed' } : null,
    amountRefunded: row.amount_refunded,
    feeAmount: row.fee_amount,
    netAmount: row.net_amount,
    livemode: row.livemode === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toNextAction(stored: string, expiresAt: string | null, returnUrl: string | null): Payment['nextAction'] {
  const action = JSON.parse(stored) as { url: string | null; method: 'GET' | 'POST' | null };
  return { type: 'redirect', url: action.url ?? '', method: action.method ?? 'GET', expiresAt: expiresAt ?? '', returnUrl };
}

type Db = Store['db'] | Tx;

// The one way a payment is read: by primary key, as many as asked, in one query. `lockOn`:
// inside a write on PostgreSQL the rows are locked (FOR UPDATE), so a concurrent move cannot
// slip in between this read and a guarded UPDATE (SQLite has one writer: nothing can).
export async function readPayments(db: Db, ids: readonly string[], options: { lockOn?: Engine } = {}): Promise<Map<string, PaymentRow>> {
  if (ids.length === 0) return new Map();
  let rows: PaymentRow[];
  if (options.lockOn === 'postgres') {
    rows = await db.selectFrom('payments').selectAll().where('id', 'in', [...ids]).forUpdate().execute();
  } else if (ids.length === 1) {
    // A compiled-once statement (store/raw.ts): the hot path of every payment read.
    rows = await selectWhere(db, 'payments', '*', { id: ids[0] });
  } else {
    rows = await db.selectFrom('payments').selectAll().where('id', 'in', [...ids]).execute();
  }
  return new Map(rows.map((r) => [r.id, r]));
}

export async function readPayment(db: Db, id: string, options: { lockOn?: Engine } = {}): Promise<PaymentRow | undefined> {
  return (await readPayments(db, [id], options)).get(id);
}

export async function findPayment(db: Db, owner: Owner, id: string, options: { lockOn?: Engine } = {}): Promise<PaymentRow | undefined> {
  // By primary key alone, ownership checked here: with the owner in the WHERE clause, PostgreSQL
  // without fresh statistics may walk an (account, livemode, ...) index instead (measured: 6 ms
  // instead of 0.03 ms per lookup on 23k rows of one account).
  const row = await readPayment(db, id, options);
  if (!row || row.account_id !== owner.accountId || row.livemode !== (owner.livemode ? 1 : 0)) return undefined;
  return row;
}

// GET /v1/payments/{id} outside any write. On PostgreSQL each read is a round trip (Parse, Bind,
// Execute and a socket write each way, plus a pooled connection), which made GET 0.37-0.40 of
// its ceiling; the reads of one turn of the event loop share one query instead (at most
// MAX_IDS_PER_QUERY ids), as the idempotency key lookups do. A read starts after the write it
// might follow has committed (a request answers after its commit), so sharing a query changes
// nothing a client can see. SQLite reads a local B-tree: no need.
const MAX_IDS_PER_QUERY = 500;
const sharedReads = new WeakMap<Store, MicroBatch<string, PaymentRow | undefined>>();
function sharedPaymentReads(store: Store): MicroBatch<string, PaymentRow | undefined> {
  let reads = sharedReads.get(store);
  if (!reads) {
    reads = new MicroBatch<string, PaymentRow | undefined>({
      maxItemsPerRun: MAX_IDS_PER_QUERY,
      maxConcurrentRuns: Number.POSITIVE_INFINITY,
      maxPending: Number.POSITIVE_INFINITY, // one per request in flight: bounded by the server's connections
      run: async (ids) => {
        // One statement text whatever the count (= any of an array, by the primary key).
        const rows = await store.db.selectFrom('payments').selectAll().where(sql<boolean>`id = any(${[...new Set(ids)]}::text[])`).execute();
        const byId = new Map(rows.map((r) => [r.id, r]));
        return ids.map((id) => ({ ok: true as const, value: byId.get(id) }));
      },
    });
    sharedReads.set(store, reads);
  }
  return reads;
}

export async function readPaymentOutsideWrites(store: Store, owner: Owner, id: string): Promise<PaymentRow> {
  const row = store.engine === 'postgres' ? await sharedPaymentReads(store).add(id) : await readPayment(store.db, id);
  // Another account's or the other mode's payment is as absent as a made-up id.
  if (!row || row.account_id !== owner.accountId || row.livemode !== (owner.livemode ? 1 : 0)) throw notFound('payment', 'id');
  return row;
}

export async function loadPayment(db: Db, owner: Owner, id: string): Promise<PaymentRow> {
  const row = await findPayment(db, owner, id);
  // Another account's or the other mode's payment is as absent as a made-up id.
  if (!row) throw notFound('payment', 'id');
  return row;
}

export function listPayments(db: Store['db'], owner: Owner, query: ListPaymentsQuery) {
  const scope = db.selectFrom('payments').selectAll()
    .where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0);
  let qb = scope;
  if (query.status) qb = qb.where('status', '=', query.status);
  if (query.method) qb = qb.where('method', '=', query.method);
  return paginate(qb, query, toPayment, scope);
}

// A new payment, written with its batch's other rows (store: defer).
export function insertPaymentRow(tx: Tx, row: PaymentRow): Promise<void> {
  return defer(tx, 'payments', [row]);
}

// Provider calls made so far, kept while the payment stays pending (a retry comes later).
export async function recordProviderAttempts(tx: Tx, id: string, attempts: number): Promise<void> {
  await tx.updateTable('payments').set({ provider_attempts: attempts }).where('id', '=', id).execute();
}

// Approvals of a batch of confirmations in one guarded statement on PostgreSQL (one statement
// each on SQLite, where a statement costs no round trip). Returns how many rows moved.
export interface PendingApproval {
  id: string;
  changes: Partial<PaymentRow>;
}
export async function approvePending(tx: Tx, engine: Engine, approvals: readonly PendingApproval[], nowIso: string): Promise<number> {
  if (approvals.length === 0) return 0;
  if (engine === 'sqlite') {
    let updated = 0;
    for (const a of approvals) {
      updated += await updateWhere(tx, 'payments', { ...a.changes, status: 'approved', updated_at: nowIso }, { id: a.id, status: 'pending' });
    }
    return updated;
  }
  const values = approvals.map((a) => sql`(${a.id}::text, ${a.changes.provider_charge_id ?? null}::text, ${a.changes.provider_attempts ?? 0}::integer, ${a.changes.fee_amount ?? null}::bigint, ${a.changes.net_amount ?? null}::bigint)`);
  const { rows } = await sql<{ id: string }>`update payments as p set status = 'approved', updated_at = ${nowIso}, provider_charge_id = v.charge, provider_attempts = v.attempts, fee_amount = v.fee, net_amount = v.net
    from (values ${sql.join(values)}) as v(id, charge, attempts, fee, net)
    where p.id = v.id and p.status = 'pending' returning p.id`.execute(tx);
  return rows.length;
}

// The account's settings (fees) an approval computes with.
export async function readAccountSettings(db: Db, accountId: string): Promise<AccountSettings> {
  const [account] = await selectWhere(db, 'accounts', ['settings'], { id: accountId });
  if (!account) throw new Error(`payment of unknown account ${accountId}`);
  return parseSettings(account.settings);
}

// A stored card token of the owner: what a payment shows (brand, last4), and whether it was used.
export function readCardToken(tx: Tx, owner: Owner, token: string) {
  return tx.selectFrom('card_tokens').select(['brand', 'last4', 'used_at'])
    .where('id', '=', token).where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0)
    .executeTakeFirst();
}

// Marks a single-use token used, once (guarded: an already used token is left as it is).
export async function markCardTokenUsed(tx: Tx, token: string, nowIso: string): Promise<void> {
  await tx.updateTable('card_tokens').set({ used_at: nowIso }).where('id', '=', token).where('used_at', 'is', null).execute();
}

// The sandbox outcome a stored test card token was made with.
export async function readCardTokenOutcome(db: Db, token: string): Promise<string | undefined> {
  const row = await db.selectFrom('card_tokens').select('test_outcome').where('id', '=', token).executeTakeFirst();
  return row?.test_outcome ?? undefined;
}

// Moves a payment along the state table inside the caller's transaction. The UPDATE is guarded
// by the status it was read with, so two concurrent moves cannot both win.
// The state table's verdict on a move, as the API's INVALID_STATE.
export function checkTransition(row: PaymentRow, to: PaymentStatus): void {
  try {
    assertTransition(row.status as PaymentStatus, to);
  } catch (e) {
    if (e instanceof IllegalTransition) throw invalidState(e.message);
    throw e;
  }
}

export async function transition(tx: Tx, row: PaymentRow, to: PaymentStatus, changes: Partial<PaymentRow>, nowIso: string): Promise<PaymentRow> {
  checkTransition(row, to);
  const updated = await updateWhere(tx, 'payments', { ...changes, status: to, updated_at: nowIso }, { id: row.id, status: row.status });
  if (updated !== 1) throw invalidState(`The payment changed while this request ran; fetch it and try again.`);
  return { ...row, ...changes, status: to, updated_at: nowIso };
}
