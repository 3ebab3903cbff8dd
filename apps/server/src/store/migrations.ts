import { Kysely, sql, type CreateTableBuilder, type Migration, type MigrationProvider } from 'kysely';

// What each kind of the home's stats counts (migration 0011 and after), as SQL over a row (`r` is
// NEW or OLD in a row trigger, a transition table or the table itself in a statement): its day,
// method, status, reason, amount and second amount.
const spDay = (col: string, sqlite: boolean) => (sqlite ? `date(${col}, '-3 hours')` : `to_char((${col})::timestamptz at time zone 'UTC' - interval '3 hours', 'YYYY-MM-DD')`);
const STATS_KINDS = [
  { kind: 'payment', table: 'payments', cols: ['status', 'amount_refunded', 'failure_code'],
    row: (r: string, sqlite: boolean) => [spDay(`${r}.created_at`, sqlite), `${r}.method`, `${r}.status`, `coalesce(${r}.failure_code, '')`, `${r}.amount`, `${r}.amount_refunded`] },
  { kind: 'refund', table: 'refunds', cols: ['status', 'amount'],
    row: (r: string, sqlite: boolean) => [spDay(`${r}.created_at`, sqlite), `''`, `${r}.status`, `coalesce(${r}.reason, '')`, `${r}.amount`, `${r}.net_amount`] },
  { kind: 'settlement', table: 'settlements', cols: ['status', 'amount', 'hold_reason'],
    row: (r: string) => [`${r}.settlement_date`, `${r}.payee_type`, `${r}.status`, `coalesce(${r}.hold_reason, '')`, `${r}.amount`, `${r}.receivable_count`] },
  { kind: 'webhook_delivery', table: 'webhook_deliveries', cols: ['status', 'attempts'],
    row: (r: string, sqlite: boolean) => [spDay(`${r}.created_at`, sqlite), `''`, `${r}.status`, `''`, '0', `${r}.attempts`] },
];
const STATS_COLUMNS = 'kind, day, account_id, livemode, method, status, reason, count, amount, amount2';
// stats_daily's and stats_deltas' columns (0011; stats_deltas again in 0020).
function withStatsColumns(t: CreateTableBuilder<string, string>): CreateTableBuilder<string, string> {
  return t
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('amount2', 'bigint', (c) => c.notNull());
}
// One delta row's VALUES tuple, +1 (a new row) or -1 (an old one).
function statsValues(k: { kind: string; row: (r: string) => string[] }, r: string, sign: '' | '-'): string {
  const [day, method, status, reason, amount, amount2] = k.row(r);
  return `('${k.kind}', ${day}, ${r}.account_id, ${r}.livemode, ${method}, ${status}, ${reason}, ${sign}1, ${sign}${amount}, ${sign}${amount2})`;
}

// Versioned migrations, in code so they ship with the build. Never edit a released migration:
// add the next one. Types are the portable subset (text, bigint, integer) of both engines.
const migrations: Record<string, Migration> = {
  '0001_core': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('email', 'text')
        .addColumn('live_enabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema.createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('display', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id']).execute();

      await db.schema.createTable('payments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('metadata', 'text')
        .addColumn('customer', 'text')
        .addColumn('installments', 'integer')
        .addColumn('card_token', 'text')
        .addColumn('card_brand', 'text')
        .addColumn('card_last4', 'text')
        .addColumn('pix_copy_paste', 'text')
        .addColumn('expires_at', 'text')
        .addColumn('failure_code', 'text')
        .addColumn('failure_message', 'text')
        .addColumn('amount_refunded', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`amount_refunded >= 0 and amount_refunded <= amount`))
        .addColumn('fee_amount', 'bigint')
        .addColumn('net_amount', 'bigint')
        .addColumn('provider_charge_id', 'text')
        .addColumn('provider_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('payments_list').on('payments').columns(['account_id', 'livemode', 'id']).execute();
      await db.schema.createIndex('payments_status').on('payments').columns(['account_id', 'livemode', 'status', 'id']).execute();

      await db.schema.createTable('card_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('brand', 'text', (c) => c.notNull())
        .addColumn('last4', 'text', (c) => c.notNull())
        .addColumn('exp_month', 'integer', (c) => c.notNull())
        .addColumn('exp_year', 'integer', (c) => c.notNull())
        .addColumn('test_outcome', 'text', (c) => c.notNull())
        .addColumn('used_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema.createTable('idempotency_keys')
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'livemode', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_age').on('idempotency_keys').columns(['created_at_ms']).execute();

      // Small rows keyed by text: on SQLite, WITHOUT ROWID stores them in the primary key's
      // B-tree itself, one tree to update per insert instead of two.
      await db.schema.createTable('jobs')
        .modifyEnd(isSqlite(db) ? sql`without rowid` : sql``)
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('run_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('locked_until_ms', 'bigint')
        .addColumn('locked_by', 'text')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('jobs_due').on('jobs').columns(['run_at_ms']).execute();

      await db.schema.createTable('events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_list').on('events').columns(['account_id', 'livemode', 'id']).execute();

      await db.schema.createTable('sandbox_provider_charges')
        .addColumn('idempotency_key', 'text', (c) => c.primaryKey())
        .addColumn('charge_id', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0002_marketplace': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('recipients')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('document', 'text', (c) => c.notNull())
        .addColumn('bank_code', 'text', (c) => c.notNull())
        .addColumn('agency', 'text', (c) => c.notNull())
        .addColumn('account', 'text', (c) => c.notNull())
        .addColumn('account_type', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('recipients_list').on('recipients').columns(['account_id', 'livemode', 'id']).execute();

      await db.schema.createTable('split_rules')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('priority', 'integer', (c) => c.notNull())
        .addColumn('conditions', 'text')
        .addColumn('splits', 'text', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('split_rules_account').on('split_rules').columns(['account_id', 'livemode', 'active', 'priority']).execute();

      await db.schema.createTable('receivables')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('payment_id', 'text', (c) => c.notNull())
        .addColumn('source_id', 'text', (c) => c.notNull())
        .addColumn('line', 'integer', (c) => c.notNull())
        .addColumn('payee_type', 'text', (c) => c.notNull())
        .addColumn('payee_id', 'text', (c) => c.notNull())
        .addColumn('split_rule_id', 'text')
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('available_on', 'text', (c) => c.notNull())
        .addColumn('settlement_id', 'text')
        .addColumn('refund_id', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        // Settled if and only if it belongs to a settlement: one column, so never to two.
        .addCheckConstraint('receivables_settled_has_settlement', sql`(status = 'settled') = (settlement_id is not null)`)
        .addUniqueConstraint('receivables_once_per_source', ['source_id', 'line'])
        .execute();
      await db.schema.createIndex('receivables_list').on('receivables').columns(['account_id', 'livemode', 'id']).execute();
      await db.schema.createIndex('receivables_payment').on('receivables').columns(['payment_id']).execute();
      await db.schema.createIndex('receivables_settlement').on('receivables').columns(['settlement_id']).execute();
      // Only pending receivables are ever looked up by payee and date (settlement runs): a
      // partial index stays the size of what is still owed, however many have been settled.
      await db.schema.createIndex('receivables_due').on('receivables').columns(['account_id', 'livemode', 'payee_type', 'payee_id', 'available_on'])
        .where(sql.ref('status'), '=', sql.lit('pending')).execute();

      await db.schema.createTable('settlement_runs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('run_date', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('settlement_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('receivable_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('total_amount', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .execute();

      await db.schema.createTable('settlements')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('payee_type', 'text', (c) => c.notNull())
        .addColumn('payee_id', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('receivable_count', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('bank_account', 'text')
        .addColumn('settlement_date', 'text', (c) => c.notNull())
        .addColumn('paid_at', 'text')
        .addColumn('failure_reason', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        // One settlement per payee per run.
        .addUniqueConstraint('settlements_once_per_run', ['run_id', 'account_id', 'livemode', 'payee_type', 'payee_id'])
        .execute();
      await db.schema.createIndex('settlements_list').on('settlements').columns(['account_id', 'livemode', 'id']).execute();

      await db.schema.createTable('refunds')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('payment_id', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
        .addColumn('fee_refunded', 'bigint', (c) => c.notNull())
        .addColumn('net_amount', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('metadata', 'text')
        .addColumn('provider_refund_id', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('refunds_list').on('refunds').columns(['account_id', 'livemode', 'id']).execute();
      await db.schema.createIndex('refunds_payment').on('refunds').columns(['payment_id']).execute();

      await db.schema.createTable('admin_users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema.createTable('admin_sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('admin_id', 'text', (c) => c.notNull())
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0003_webhooks': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('previous_secret', 'text')
        .addColumn('previous_secret_expires_at_ms', 'bigint')
        .addColumn('disabled_reason', 'text')
        .addColumn('failing_since_ms', 'bigint')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_endpoints_account').on('webhook_endpoints').columns(['account_id', 'livemode', 'enabled']).execute();

      await db.schema.createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('endpoint_id', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at_ms', 'bigint')
        .addColumn('last_response_code', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('last_attempt_at', 'text')
        .addColumn('locked_until_ms', 'bigint')
        .addColumn('locked_by', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['next_attempt_at_ms']).execute();
      await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'id']).execute();
      await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').columns(['event_id']).execute();
      await db.schema.createIndex('events_type').on('events').columns(['account_id', 'livemode', 'type', 'id']).execute();
    },
  },
  // Back office (issue 18): admin roles, and the audit log every admin mutation writes in its
  // own transaction.
  '0004_backoffice': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('admin_users').addColumn('role', 'text', (c) => c.notNull().defaultTo('admin')).execute();
      await db.schema.createTable('admin_audit_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('actor_id', 'text', (c) => c.notNull())
        .addColumn('actor_email', 'text', (c) => c.notNull())
        .addColumn('actor_role', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('object_type', 'text', (c) => c.notNull())
        .addColumn('object_id', 'text', (c) => c.notNull())
        .addColumn('before', 'text')
        .addColumn('after', 'text')
        .addColumn('reason', 'text')
        .addColumn('ip', 'text', (c) => c.notNull())
        .addColumn('user_agent', 'text')
        .addColumn('correlation_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('admin_audit_log_object').on('admin_audit_log').columns(['object_type', 'object_id', 'id']).execute();
      await db.schema.createIndex('admin_audit_log_actor').on('admin_audit_log').columns(['actor_email', 'id']).execute();
      await db.schema.createIndex('admin_audit_log_action').on('admin_audit_log').columns(['action', 'id']).execute();
      // The back office lists a run's settlements.
      await db.schema.createIndex('settlements_run').on('settlements').columns(['run_id', 'id']).execute();
    },
  },
  // Merchant payout bank account (issue 12): set by an admin; a merchant settlement made without
  // one is held (hold_reason) until it is set.
  '0005_payout_bank_account': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('accounts').addColumn('payout_bank_account', 'text').execute();
      await db.schema.alterTable('settlements').addColumn('hold_reason', 'text').execute();
      // Only held settlements are looked up this way (to release them): a partial index stays tiny.
      await db.schema.createIndex('settlements_held').on('settlements').columns(['account_id', 'payee_type'])
        .where(sql.ref('status'), '=', sql.lit('held')).execute();
    },
  },
  // Hosted checkout (issue 15): checkout sessions, the payment a session made, the account's
  // allowed embed origins, and publishable keys kept readable (they are public by design: the
  // hosted page is handed its account's key to tokenize cards).
  '0006_checkout': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('checkout_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('methods', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('metadata', 'text')
        .addColumn('customer', 'text')
        .addColumn('installments', 'integer', (c) => c.notNull())
        .addColumn('success_url', 'text')
        .addColumn('cancel_url', 'text')
        .addColumn('base_url', 'text', (c) => c.notNull())
        .addColumn('client_secret', 'text', (c) => c.notNull())
        .addColumn('payment_id', 'text')
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'text')
        .addColumn('expired_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('checkout_sessions_list').on('checkout_sessions').columns(['account_id', 'livemode', 'id']).execute();
      await db.schema.alterTable('payments').addColumn('checkout_session_id', 'text').execute();
      // At most one payment per session that is in flight or was sold: a second pay while one is
      // pending, or after one was approved, cannot be written, whatever the requests race. A
      // declined, failed, canceled or expired payment leaves the session free for another.
      await sql`create unique index payments_one_live_per_checkout on payments (checkout_session_id)
        where checkout_session_id is not null and status in ('pending', 'approved', 'partially_refunded', 'refunded')`.execute(db);
      await db.schema.alterTable('accounts').addColumn('embed_origins', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('publishable_key', 'text').execute();
    },
  },
  // /metrics' gauge of pending payments (issue 13): a partial index holds only the pending ones,
  // so the count costs what the backlog is, never what the whole table is.
  '0007_payments_pending': {
    async up(db: Kysely<any>) {
      await db.schema.createIndex('payments_pending').on('payments').columns(['livemode'])
        .where(sql.ref('status'), '=', sql.lit('pending')).execute();
    },
  },
  // Keys are stored hashed, publishable ones too (issue 15): the hosted checkout page tokenizes
  // with its session's client secret, so nothing needs a readable pk_ any more. The copies 0006
  // kept are wiped. The column stays, always null from now on: dropping it would break any
  // instance still running the code that wrote it during a rolling upgrade.
  '0008_publishable_keys_hashed_only': {
    async up(db: Kysely<any>) {
      await db.updateTable('api_keys').set({ publishable_key: null }).where('publishable_key', 'is not', null).execute();
    },
  },
  // Refunds prorate cumulatively on each payee's share of the sale (issue 23, domain/refund.ts),
  // and refunds reduce a pending sale receivable's amount in place: the share is kept apart.
  // - original_amount: what each receivable was when made. Sale rows of never-refunded sales,
  //   and refund adjustments, are as they were made; a refunded sale's rows take the amount of
  //   their receivable.created event (left null where events were purged: refunds of that sale
  //   then prorate the net part on what each payee still holds, as before).
  // - Sales broken by the old per-refund rule: a partial refund could record more net than the
  //   payees still held (its reductions were capped, its row was not), so the sale's receivables
  //   summed to less than its net value minus its refunds' nets and every later refund failed.
  //   What the payees really gave up is what their receivables lost; the difference was fee the
  //   platform gave back. The latest refunds' rows move that difference from net_amount to
  //   fee_refunded, so they say what happened and the sale can be refunded to the end.
  '0009_refund_original_amounts_sign_in_failures': {
    async up(db: Kysely<any>) {
      // Failed admin sign-ins, counted in the store so every API process shares the lock.
      await db.schema.createTable('admin_sign_in_failures')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('failures', 'text', (c) => c.notNull())
        .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('admin_sign_in_failures_updated').on('admin_sign_in_failures').columns(['updated_at_ms']).execute();
      await db.schema.alterTable('receivables').addColumn('original_amount', 'bigint').execute();
      await sql`update receivables set original_amount = amount where source_id <> payment_id
        or payment_id in (select id from payments where amount_refunded = 0)`.execute(db);
      const refunded = await db.selectFrom('payments').select(['id', 'net_amount']).where('amount_refunded', '>', 0).execute();
      const objectField = (field: string) => (isSqlite(db) ? sql`json_extract(data, ${'$.object.' + field})` : sql`(data::json -> 'object' ->> ${field})`);
      for (let i = 0; i < refunded.length; i += 500) {
        const ids = refunded.slice(i, i + 500).map((p) => p.id as string);
        const created = await db.selectFrom('events')
          .select([objectField('id').as('rid'), objectField('amount').as('amount')])
          .where('type', '=', 'receivable.created').where(objectField('paymentId'), 'in', ids).execute();
        for (const e of created) {
          await db.updateTable('receivables').set({ original_amount: Number(e.amount) })
            .where('id', '=', String(e.rid)).whereRef('source_id', '=', 'payment_id').where('original_amount', 'is', null).execute();
        }
        for (const p of refunded.slice(i, i + 500)) {
          const held = await db.selectFrom('receivables').select((eb) => eb.fn.sum('amount').as('total')).where('payment_id', '=', p.id).executeTakeFirstOrThrow();
          const refunds = await db.selectFrom('refunds').select(['id', 'fee_refunded', 'net_amount']).where('payment_id', '=', p.id).orderBy('id', 'desc').execute();
          const recordedNet = refunds.reduce((sum, r) => sum + Number(r.net_amount), 0);
          let over = Number(held.total ?? 0) - (Number(p.net_amount ?? 0) - recordedNet);
          for (const r of refunds) {
            if (over <= 0) break;
            const move = Math.min(over, Number(r.net_amount));
            await db.updateTable('refunds').set({ fee_refunded: Number(r.fee_refunded) + move, net_amount: Number(r.net_amount) - move }).where('id', '=', r.id).execute();
            over -= move;
          }
        }
      }
    },
  },
  '0010_connectors': {
    async up(db: Kysely<any>) {
      // A provider's credentials and settings (issue 25). owner_account_id null: the platform's,
      // the default of every merchant; a merchant's own overrides it. Secrets are one sealed blob
      // (providers/secrets/envelope.ts), never in clear.
      await db.schema.createTable('connector_accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('owner_account_id', 'text')
        .addColumn('connector', 'text', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('settings', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('secrets', 'text', (c) => c.notNull())
        .addColumn('secrets_key_id', 'text', (c) => c.notNull())
        .addColumn('secrets_rotated_at', 'text', (c) => c.notNull())
        .addColumn('certificate_fingerprint', 'text')
        .addColumn('certificate_subject', 'text')
        .addColumn('certificate_expires_at', 'text')
        .addColumn('webhook_token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('webhook_registered_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('disabled_at', 'text')
        .execute();
      await db.schema.createIndex('connector_accounts_owner').on('connector_accounts').columns(['owner_account_id', 'method', 'environment']).execute();

      // Provider references on our objects.
      await db.schema.alterTable('payments').addColumn('connector_account_id', 'text').execute();
      await db.schema.alterTable('payments').addColumn('provider_txid', 'text').execute();
      await db.schema.alterTable('payments').addColumn('provider_e2eid', 'text').execute();
      await db.schema.createIndex('payments_provider_txid').on('payments').columns(['provider_txid']).execute();
      // 'requested' (POST /v1/refunds) or a return the payer's bank started (MED: 'med_fraud',
      // 'med_operational'), recorded against the payment as a refund.
      await db.schema.alterTable('refunds').addColumn('kind', 'text', (c) => c.notNull().defaultTo('requested')).execute();

      // Provider notifications, raw and deduplicated: only hints, each triggers a read-back.
      await db.schema.createTable('provider_notifications')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('connector_account_id', 'text', (c) => c.notNull())
        .addColumn('body_hash', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('received_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('provider_notifications_dedupe', ['connector_account_id', 'body_hash'])
        .execute();

      // Pix received at a PSP, as reconciliation and read-backs saw them: matched to a payment, or
      // a mismatch operators resolve (no payment, another amount, paid after expiry and returned).
      await db.schema.createTable('pix_received')
        .addColumn('e2eid', 'text', (c) => c.primaryKey())
        .addColumn('connector_account_id', 'text', (c) => c.notNull())
        .addColumn('txid', 'text')
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('paid_at', 'text', (c) => c.notNull())
        .addColumn('payment_id', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('pix_received_status').on('pix_received').columns(['status', 'created_at']).execute();
    },
  },
  // The hosted checkout's branding per merchant account (issue 29): a display name, an accent
  // color and a logo, kept apart from accounts so that reading an account never reads a logo.
  // The logo is stored as base64 text (the same on both engines), addressed by its SHA-256.
  '0012_checkout_branding': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('account_branding')
        .addColumn('account_id', 'text', (c) => c.primaryKey())
        .addColumn('display_name', 'text')
        .addColumn('accent_color', 'text')
        .addColumn('logo_type', 'text')
        .addColumn('logo_base64', 'text')
        .addColumn('logo_sha256', 'text')
        .addColumn('logo_bytes', 'integer')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('account_branding_logo').on('account_branding').columns(['logo_sha256']).execute();
    },
  },
  // The back office's home (issue 29): counts and sums of payments, refunds, settlements and
  // webhook deliveries per São Paulo day, account, mode and method/status/reason, so the home
  // reads a few hundred rows instead of every payment. Triggers on both engines write a +1/-1
  // delta row for every insert, change of a counted column, or delete, in the transaction that
  // makes the change: nothing is counted that did not commit, and no write path can forget it.
  // Deltas are append-only (no hot row for concurrent writers to queue on, no deadlock); the
  // worker folds them into stats_daily every minute (modules/admin/stats/service.ts), and a read
  // sums both tables. stats_daily also keeps every account's total per day under account_id '*',
  // so the home for all merchants reads a row per day and status, not one per merchant. The
  // migration backfills stats_daily from what is already there.
  '0011_stats_daily': {
    async up(db: Kysely<any>) {
      const sqlite = isSqlite(db);
      for (const table of ['stats_daily', 'stats_deltas']) {
        let t: CreateTableBuilder<string, string> = db.schema.createTable(table);
        if (table === 'stats_deltas') t = sqlite ? t.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement()) : t.addColumn('seq', 'bigserial', (c) => c.primaryKey());
        t = withStatsColumns(t);
        if (table === 'stats_daily') t = t.addPrimaryKeyConstraint('stats_daily_pk', ['account_id', 'day', 'kind', 'livemode', 'method', 'status', 'reason']);
        await t.execute();
      }
      const kinds = STATS_KINDS.map((k) => ({ ...k, row: (r: string) => k.row(r, sqlite) }));
      const columns = STATS_COLUMNS;
      const values = statsValues;
      for (const k of kinds) {
        const [day, method, status, reason, amount, amount2] = k.row(k.table);
        await sql.raw(`insert into stats_daily (${columns})
          select '${k.kind}', ${day}, account_id, livemode, ${method}, ${status}, ${reason}, count(*), coalesce(sum(${amount}), 0), coalesce(sum(${amount2}), 0)
          from ${k.table} group by 2, 3, 4, 5, 6, 7`).execute(db);
        await sql.raw(`insert into stats_daily (${columns})
          select '${k.kind}', ${day}, '*', livemode, ${method}, ${status}, ${reason}, count(*), coalesce(sum(${amount}), 0), coalesce(sum(${amount2}), 0)
          from ${k.table} group by 2, 4, 5, 6, 7`).execute(db);
        const changed = k.cols.map((c) => (sqlite ? `old.${c} is not new.${c}` : `old.${c} is distinct from new.${c}`)).join(' or ');
        if (sqlite) {
          await sql.raw(`create trigger ${k.table}_stats_insert after insert on ${k.table} begin
            insert into stats_deltas (${columns}) values ${values(k, 'new', '')}; end`).execute(db);
          await sql.raw(`create trigger ${k.table}_stats_update after update on ${k.table} when ${changed} begin
            insert into stats_deltas (${columns}) values ${values(k, 'old', '-')}, ${values(k, 'new', '')}; end`).execute(db);
          await sql.raw(`create trigger ${k.table}_stats_delete after delete on ${k.table} begin
            insert into stats_deltas (${columns}) values ${values(k, 'old', '-')}; end`).execute(db);
        } else {
          await sql.raw(`create function ${k.table}_stats() returns trigger language plpgsql as $$
            begin
              if tg_op = 'UPDATE' and not (${changed}) then return null; end if;
              if tg_op in ('UPDATE', 'DELETE') then insert into stats_deltas (${columns}) values ${values(k, 'old', '-')}; end if;
              if tg_op in ('UPDATE', 'INSERT') then insert into stats_deltas (${columns}) values ${values(k, 'new', '')}; end if;
              return null;
            end $$`).execute(db);
          await sql.raw(`create trigger ${k.table}_stats after insert or update or delete on ${k.table}
            for each row execute function ${k.table}_stats()`).execute(db);
        }
      }
      // Endpoint ids and accounts whose deliveries fail, for the home's "endpoints failing".
      await db.schema.createIndex('webhook_endpoints_failing').on('webhook_endpoints').columns(['failing_since_ms']).execute();
    },
  },
  // Pix identifiers in the public API (issue 25): a devolução's rtrId (the return's id in the
  // Pix system, what the payer's bank shows) is kept on the refund, as its id at the PSP already
  // is (provider_refund_id). Null for sandbox refunds and until the PSP gives it.
  '0013_refund_pix_rtr_id': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('refunds').addColumn('provider_rtr_id', 'text').execute();
    },
  },
  // Payouts by Pix (issue 26): Pix keys on recipients and on the merchant's payout account, the
  // payout's reference at the PSP on each settlement, and the send slots per source account.
  '0014_pix_payouts': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('recipients').addColumn('pix_key_type', 'text').execute();
      await db.schema.alterTable('recipients').addColumn('pix_key', 'text').execute();
      await db.schema.alterTable('accounts').addColumn('payout_pix_key', 'text').execute();
      for (const column of ['pix_key', 'payout_connector_account_id', 'payout_id', 'payout_destination', 'payout_e2eid', 'payout_sent_at', 'failure_code']) {
        await db.schema.alterTable('settlements').addColumn(column, 'text').execute();
      }
      // The send slot reserved for this payout at its source account (ms since the epoch).
      await db.schema.alterTable('settlements').addColumn('payout_slot_ms', 'bigint').execute();
      // A PSP's notification names the payout by our id (idEnvio): found by it.
      await db.schema.createIndex('settlements_payout_id').on('settlements').columns(['payout_id']).execute();
      // Reconciliation reads the payouts still processing, oldest first: a partial index stays
      // the size of what is in flight.
      await db.schema.createIndex('settlements_processing').on('settlements').columns(['payout_sent_at'])
        .where(sql.ref('status'), '=', sql.lit('processing')).execute();
      await db.schema.createTable('payout_sources')
        .addColumn('connector_account_id', 'text', (c) => c.primaryKey())
        .addColumn('next_slot_ms', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  // Cards on Adyen (issue 27). A live card token wraps what the acquirer needs (the card fields
  // encrypted in the buyer's browser with the acquirer's key: never a number we could read). A
  // payment waiting for its buyer (3-D Secure) is `requires_action`, with the action to perform;
  // it holds its checkout session as a pending one does. Adyen's notification items are stored
  // once each (its pspReference, event and success), verified, as hints for the payment's sync.
  '0016_cards_adyen': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('card_tokens').addColumn('acquirer_data', 'text').execute();
      await db.schema.alterTable('payments').addColumn('next_action', 'text').execute();
      await db.schema.alterTable('payments').addColumn('action_expires_at', 'text').execute();
      await sql`drop index payments_one_live_per_checkout`.execute(db);
      await sql`create unique index payments_one_live_per_checkout on payments (checkout_session_id)
        where checkout_session_id is not null and status in ('pending', 'requires_action', 'approved', 'partially_refunded', 'refunded')`.execute(db);
      await db.schema.createIndex('payments_provider_charge').on('payments').columns(['connector_account_id', 'provider_charge_id']).execute();
      await db.schema.createTable('card_notifications')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('connector_account_id', 'text', (c) => c.notNull())
        .addColumn('psp_reference', 'text', (c) => c.notNull())
        .addColumn('original_reference', 'text')
        .addColumn('merchant_reference', 'text', (c) => c.notNull())
        .addColumn('event_code', 'text', (c) => c.notNull())
        .addColumn('success', 'integer', (c) => c.notNull())
        .addColumn('amount', 'bigint')
        .addColumn('reason', 'text')
        .addColumn('event_date', 'text')
        .addColumn('payment_id', 'text')
        .addColumn('received_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('card_notifications_dedupe', ['connector_account_id', 'psp_reference', 'event_code', 'success'])
        .execute();
      await db.schema.createIndex('card_notifications_payment').on('card_notifications').columns(['payment_id', 'received_at']).execute();
    },
  },
  // Disputes (issue 27): card chargebacks (Adyen's dispute notifications) and Pix MED returns,
  // one row per dispute at its source (`source_ref`: Adyen's dispute pspReference, or the MED
  // return's id at the PSP). `stage_rank` is the furthest notification applied (an earlier one
  // arriving late is ignored); `debited_amount` what the payees give up while it is lost, with
  // `money_moves` numbering the receivables each debit or give-back makes (line = moves * 1000 +
  // payee), so the unique (source_id, line) refuses a second one. A receivable made by a dispute
  // names it (`dispute_id`); a dispute notification keeps what its additionalData said.
  '0017_disputes': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('disputes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('payment_id', 'text', (c) => c.notNull().references('payments.id'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('reason_code', 'text')
        .addColumn('respond_by', 'text')
        .addColumn('source_ref', 'text', (c) => c.notNull())
        .addColumn('connector_account_id', 'text')
        .addColumn('refund_id', 'text')
        .addColumn('stage_rank', 'integer', (c) => c.notNull())
        .addColumn('debited_amount', 'bigint', (c) => c.notNull())
        .addColumn('money_moves', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('closed_at', 'text')
        .addUniqueConstraint('disputes_once_per_source', ['payment_id', 'source_ref'])
        .addCheckConstraint('disputes_amounts', sql`amount > 0 and debited_amount >= 0 and debited_amount <= amount`)
        .execute();
      await db.schema.createIndex('disputes_list').on('disputes').columns(['account_id', 'livemode', 'id']).execute();
      await db.schema.createIndex('disputes_payment').on('disputes').columns(['payment_id']).execute();
      await db.schema.alterTable('receivables').addColumn('dispute_id', 'text').execute();
      await db.schema.alterTable('card_notifications').addColumn('dispute_data', 'text').execute();
    },
  },
  // Payouts by Pix, the rest of issue 26: a failed settlement retried by an operator points at
  // the settlement that retried it (at most one: unique), the merchant's payout account says
  // whose document its bank account / Pix key is (checked against the key, sent to the PSP), and
  // the daily statement reads a payee's paid settlements by payment time.
  '0018_payout_retries_statements': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('settlements').addColumn('retry_of', 'text').execute();
      await db.schema.createIndex('settlements_retry_of').on('settlements').columns(['retry_of']).unique().execute();
      await db.schema.alterTable('accounts').addColumn('payout_holder_document', 'text').execute();
      await db.schema.createIndex('settlements_paid_by_payee').on('settlements')
        .columns(['account_id', 'livemode', 'payee_type', 'payee_id', 'paid_at']).execute();
    },
  },
  // Cards, continued (issue 27). A merchant on its own pages names where the buyer lands after
  // 3-D Secure (`returnUrl`): our return route completes the payment at the acquirer, then sends
  // the buyer there. Manual capture.
  '0019_card_return_url': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('payments').addColumn('return_url', 'text').execute();
      // Manual capture (the acquirer account's setting, copied onto the payment when it is
      // made): an authorized payment waits in requires_capture; the capture asked is
      // `processing` until the acquirer's CAPTURE (or CAPTURE_FAILED) notification.
      await db.schema.alterTable('payments').addColumn('capture_method', 'text').execute();
      await db.schema.alterTable('payments').addColumn('capture_status', 'text').execute();
      await db.schema.alterTable('payments').addColumn('capture_reference', 'text').execute();
      // An authorized, uncaptured payment holds its checkout session as an approved one does.
      await sql`drop index payments_one_live_per_checkout`.execute(db);
      await sql`create unique index payments_one_live_per_checkout on payments (checkout_session_id)
        where checkout_session_id is not null and status in ('pending', 'requires_action', 'requires_capture', 'approved', 'partially_refunded', 'refunded')`.execute(db);
    },
  },
  // The home's stats deltas, cheaper to write (issue 30: the per-row triggers of 0011 cost about
  // a tenth of PostgreSQL's create rate). The triggers stay, so no write path can forget a count:
  // - PostgreSQL: a statement is counted once, over its transition tables, one delta row per
  //   day/account/status group, not a PL/pgSQL call and an insert per row: the store writes a
  //   batch's payments and deliveries as one multi-row INSERT per table, and the worker approves
  //   a round of card payments in one UPDATE.
  // - SQLite: a row per group, which each change adds to in place (an upsert on the group's
  //   unique index), instead of a new row per change for the fold to read and delete later. Deltas
  //   were append-only so that concurrent writers never queue on a hot row; SQLite has one writer.
  //   No AUTOINCREMENT (it updated sqlite_sequence on every delta): seq only orders the fold, which
  //   runs in a write transaction of that one writer, so a reused seq is never one it read.
  '0020_stats_deltas_per_statement': {
    async up(db: Kysely<any>) {
      const sqlite = isSqlite(db);
      const kinds = STATS_KINDS.map((k) => ({ ...k, row: (r: string) => k.row(r, sqlite) }));
      if (sqlite) {
        for (const k of kinds) for (const op of ['insert', 'update', 'delete']) await sql.raw(`drop trigger ${k.table}_stats_${op}`).execute(db);
        await sql`alter table stats_deltas rename to stats_deltas_0011`.execute(db);
        await withStatsColumns(db.schema.createTable('stats_deltas').addColumn('seq', 'integer', (c) => c.primaryKey())).execute();
        const group = 'kind, day, account_id, livemode, method, status, reason';
        await sql.raw(`create unique index stats_deltas_group on stats_deltas (${group})`).execute(db);
        await sql.raw(`insert into stats_deltas (${STATS_COLUMNS})
          select ${group}, sum(count), sum(amount), sum(amount2) from stats_deltas_0011 group by ${group} order by min(seq)`).execute(db);
        await sql`drop table stats_deltas_0011`.execute(db);
        const upsert = `on conflict (${group}) do update set count = count + excluded.count, amount = amount + excluded.amount, amount2 = amount2 + excluded.amount2`;
        for (const k of kinds) {
          const changed = k.cols.map((c) => `old.${c} is not new.${c}`).join(' or ');
          await sql.raw(`create trigger ${k.table}_stats_insert after insert on ${k.table} begin
            insert into stats_deltas (${STATS_COLUMNS}) values ${statsValues(k, 'new', '')} ${upsert}; end`).execute(db);
          await sql.raw(`create trigger ${k.table}_stats_update after update on ${k.table} when ${changed} begin
            insert into stats_deltas (${STATS_COLUMNS}) values ${statsValues(k, 'old', '-')} ${upsert};
            insert into stats_deltas (${STATS_COLUMNS}) values ${statsValues(k, 'new', '')} ${upsert}; end`).execute(db);
          await sql.raw(`create trigger ${k.table}_stats_delete after delete on ${k.table} begin
            insert into stats_deltas (${STATS_COLUMNS}) values ${statsValues(k, 'old', '-')} ${upsert}; end`).execute(db);
        }
        return;
      }
      // One function per table and event, each over its statement's transition tables: the rows
      // as they were (-1 and minus their amounts) and as they are (+1), summed per group. A group
      // whose sums are all zero (a row whose counted columns did not change, or changes that
      // cancel out) writes nothing.
      for (const k of kinds) {
        const side = (r: 'o' | 'n', sign: '' | '-') => {
          const [day, method, status, reason, amount, amount2] = k.row(r);
          return `select ${day} as day, ${r}.account_id, ${r}.livemode, ${method} as method, ${status} as status, ${reason} as reason,
            ${sign}1 as count, ${sign}${amount} as amount, ${sign}${amount2} as amount2 from ${r === 'o' ? 'old_rows' : 'new_rows'} ${r}`;
        };
        const sides = { insert: [side('n', '')], update: [side('o', '-'), side('n', '')], delete: [side('o', '-')] };
        await sql.raw(`drop trigger ${k.table}_stats on ${k.table}`).execute(db);
        await sql.raw(`drop function ${k.table}_stats()`).execute(db);
        for (const op of ['insert', 'update', 'delete'] as const) {
          await sql.raw(`create function ${k.table}_stats_${op}() returns trigger language plpgsql as $$
            begin
              insert into stats_deltas (${STATS_COLUMNS})
                select '${k.kind}', day, account_id, livemode, method, status, reason, sum(count), sum(amount), sum(amount2)
                from (${sides[op].join(' union all ')}) d
                group by day, account_id, livemode, method, status, reason
                having sum(count) <> 0 or sum(amount) <> 0 or sum(amount2) <> 0;
              return null;
            end $$`).execute(db);
          const tables = op === 'insert' ? 'new table as new_rows' : op === 'delete' ? 'old table as old_rows' : 'old table as old_rows new table as new_rows';
          await sql.raw(`create trigger ${k.table}_stats_${op} after ${op} on ${k.table}
            referencing ${tables} for each statement execute function ${k.table}_stats_${op}()`).execute(db);
        }
      }
    },
  },
  // Fewer index writes per sale (issue 30): the provider's ids are looked up only for payments a
  // connector account serves, so their indexes hold only those. A sandbox or test-mode payment
  // (no connector account, no txid) no longer writes an entry of NULLs into either on create,
  // nor moves one when its confirmation sets the sandbox's charge id.
  '0021_partial_provider_indexes': {
    async up(db: Kysely<any>) {
      await sql`drop index payments_provider_txid`.execute(db);
      // By account as well: every lookup by txid names the connector account, and with both
      // columns SQLite prefers this index to payments_provider_charge's account prefix.
      await db.schema.createIndex('payments_provider_txid').on('payments').columns(['connector_account_id', 'provider_txid'])
        .where(sql.ref('provider_txid'), 'is not', null).execute();
      await sql`drop index payments_provider_charge`.execute(db);
      await db.schema.createIndex('payments_provider_charge').on('payments').columns(['connector_account_id', 'provider_charge_id'])
        .where(sql.ref('connector_account_id'), 'is not', null).execute();
    },
  },
};

function isSqlite(db: Kysely<any>): boolean {
  return (db.getExecutor().adapter as object).constructor.name === 'SqliteAdapter';
}

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
