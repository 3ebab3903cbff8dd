import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompiledQuery, sql } from 'kysely';
import { ENGINES, startManualApp, signup, auth, adminSession, webhookReceiver, testDatabase, type ManualApp, type Keys } from './helpers.js';
import { Store } from '../src/store/index.js';
import { localDate, addDays } from '../src/modules/accounts/settings.js';
import { foldStatsDeltas } from '../src/modules/admin/stats/service.js';

// The back office home's figures (GET /admin/stats): made through the public API (card and Pix
// sales, declines, a refund, a settlement run that holds and then pays, webhook deliveries to
// a working and a failing endpoint), checked against what was made and against a GROUP BY over
// the tables themselves; the same after the deltas are folded; the migration's backfill.

for (const engine of ENGINES) {
  describe(`admin stats (${engine})`, () => {
    let t: ManualApp;
    let admin: { cookie: string; csrf: string };
    let a: Keys;
    let b: Keys;
    let failing: { url: string; close: () => void };
    let working: Awaited<ReturnType<typeof webhookReceiver>>;
    const today = localDate(Date.now());

    const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
      const headers: Record<string, string> = { cookie: admin.cookie };
      if (method !== 'GET') headers['x-csrf-token'] = admin.csrf;
      const res = await t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
      return { status: res.statusCode, body: res.json() };
    };
    const api = async (url: string, key: string, payload?: object) => {
      const res = await t.app.inject({ method: payload ? 'POST' : 'GET', url, headers: auth(key), ...(payload ? { payload } : {}) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    // The app's clock moves only when the test says so: the worker's work is run when it is due.
    const settledPayment = async (key: string, id: string) => {
      await t.runDue();
      const p = await api(`/v1/payments/${id}`, key);
      assert.notEqual(p.status, 'pending', 'a card outcome');
      return p;
    };
    const stats = async (query = '') => {
      const r = await call('GET', `/admin/stats${query}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body;
    };

    before(async () => {
      t = await startManualApp(engine, { webhookScheduleMs: [0, 20, 20], webhookAllowPrivateUrls: true }, { startMs: Date.now() });
      admin = await adminSession(t);
      a = await signup(t, 'Loja A');
      b = await signup(t, 'Loja B');
      const server = createServer((_req, res) => { res.statusCode = 500; res.end('no'); });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      failing = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, close: () => server.close() };
      working = await webhookReceiver();
    });
    after(async () => {
      failing?.close();
      working?.close();
      await t?.teardown();
    });

    test('payments, declines, refunds, settlements and webhooks, per account and mode', async () => {
      const good = await api('/v1/webhook-endpoints', a.secretKey, { url: working.url, events: ['payment.created'] });
      const bad = await api('/v1/webhook-endpoints', a.secretKey, { url: failing.url, events: ['payment.created'] });
      // Account A: Pix is available the same day, so a run today settles it (and holds the
      // merchant's part: no payout bank account yet).
      assert.equal((await call('PATCH', `/admin/accounts/${a.accountId}/settings`, { settlementDelayDays: { pix: 0 } })).status, 200);
      const cards = [[1000, 'tok_visa'], [2500, 'tok_visa'], [500, 'tok_declined'], [700, 'tok_insufficient_funds']] as const;
      const made = [];
      for (const [amount, cardToken] of cards) made.push(await api('/v1/payments', a.secretKey, { amountInCents: amount, method: 'credit_card', cardToken }));
      // One after another: two runDue() at once split the due jobs between them (each claims what
      // the other has not), so the first to return may find its payment's job still running.
      const outcomes = [];
      for (const p of made) outcomes.push(await settledPayment(a.secretKey, p.id));
      assert.deepEqual(outcomes.map((p) => p.status), ['approved', 'approved', 'declined', 'declined']);
      await api('/v1/payments', a.secretKey, { amount: 300, currency: 'BRL', method: 'pix' });
      const paid = await api('/v1/payments', a.secretKey, { amount: 400, currency: 'BRL', method: 'pix' });
      await api(`/v1/sandbox/payments/${paid.id}/pay`, a.secretKey, {});
      const refund = await api('/v1/refunds', a.secretKey, { paymentId: made[1].id, amount: 300 });
      await t.runDue();
      assert.equal((await api(`/v1/refunds/${refund.id}`, a.secretKey)).status, 'succeeded', 'the refund');
      // Account B: one card sale.
      const other = await api('/v1/payments', b.secretKey, { amountInCents: 9999, method: 'credit_card', cardToken: 'tok_visa' });
      await settledPayment(b.secretKey, other.id);

      // A settlement run: the Pix sale's merchant share is held.
      const run = await call('POST', '/admin/settlement-runs', { reason: 'stats test' });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      await t.runDue();
      assert.equal((await call('GET', `/admin/settlement-runs/${run.body.id}`)).body.status, 'completed', 'the run');
      // Deliveries: 6 payment.created to each endpoint of A; the failing one gives up on each,
      // after its two retries 20 ms apart (each jittered by up to 10 %).
      await t.advance(25);
      await t.advance(25);
      const finished = await stats(`?accountId=${a.accountId}`);
      assert.deepEqual([finished.webhooks.pending, finished.webhooks.succeeded + finished.webhooks.failed], [0, 12], 'every delivery finished');

      const s = await stats(`?accountId=${a.accountId}`);
      assert.equal(s.from, addDays(today, -29));
      assert.equal(s.to, today);
      assert.equal(s.accountId, a.accountId);
      assert.equal(s.payments.count, 6);
      assert.equal(s.payments.approvedCount, 3);
      assert.equal(s.payments.volume, 1000 + 2500 + 400);
      assert.equal(s.payments.approvalRate, 3 / 5);
      assert.deepEqual(s.payments.declines, [
        { reason: 'card_declined', status: 'declined', count: 1, amount: 500 },
        { reason: 'insufficient_funds', status: 'declined', count: 1, amount: 700 },
      ]);
      assert.deepEqual(s.payments.days, [
        { date: today, method: 'credit_card', count: 4, approvedCount: 2, volume: 3500 },
        { date: today, method: 'pix', count: 2, approvedCount: 1, volume: 400 },
      ]);
      assert.deepEqual(s.refunds.succeeded, { count: 1, amount: 300 });
      assert.equal(s.refunds.amountRefundedOfPeriod, 300);
      assert.deepEqual(s.disputes, { count: 0, amount: 0, tracked: false });
      assert.equal(s.settlements.held.count, 1);
      assert.equal(s.settlements.paid.count, 0);
      assert.deepEqual(s.webhooks, {
        succeeded: 6, failed: 6, pending: 0, successRate: 0.5, failingEndpointCount: 1,
        failingEndpoints: [{ ...s.webhooks.failingEndpoints[0], id: bad.id, accountId: a.accountId, accountName: 'Loja A', livemode: false, url: failing.url }],
      });
      assert.notEqual(good.id, bad.id);

      // Every account: B's sale is in; live mode has nothing; a period before today neither.
      const all = await stats();
      assert.equal(all.payments.count, 7);
      assert.equal(all.payments.volume, 3900 + 9999);
      const live = await stats('?livemode=true');
      assert.equal(live.payments.count, 0);
      assert.equal(live.payments.approvalRate, null);
      assert.equal(live.webhooks.failingEndpointCount, 0);
      assert.equal((await stats(`?from=${addDays(today, -10)}&to=${addDays(today, -1)}`)).payments.count, 0);

      // The held settlement is released by a payout bank account, then paid.
      const bank = { bankCode: '341', agency: '1234', account: '12345-6', accountType: 'checking' };
      assert.equal((await call('PATCH', `/admin/accounts/${a.accountId}/payout-bank-account`, { bankAccount: bank, reason: 'stats test' })).status, 200);
      await t.runDue();
      const paidOut = await stats(`?accountId=${a.accountId}`);
      assert.equal(paidOut.settlements.paid.count, 1, 'the payout');
      assert.equal(paidOut.settlements.held.count, 0);
      assert.equal(paidOut.settlements.paid.amount, s.settlements.held.amount);

      // The figures equal a GROUP BY over the tables, and stay the same once folded.
      const truth = await t.store.db.selectFrom('payments').select([(eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.sum<number>('amount').as('amount')])
        .where('status', 'in', ['approved', 'partially_refunded', 'refunded']).executeTakeFirstOrThrow();
      assert.equal(all.payments.volume, Number(truth.amount));
      const before = await stats();
      // In small transactions (the fold is bounded so it never holds the writer for long): each
      // folds at most its limit, and the figures are the same after every one of them.
      const pending = Number((await t.store.db.selectFrom('stats_deltas').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      assert.ok(pending > 7, `there were deltas to fold (${pending})`);
      let rounds = 0;
      for (let folded = 7; folded === 7; rounds++) {
        folded = await t.store.write((tx) => foldStatsDeltas(tx, t.store.engine, 7));
        assert.ok(folded <= 7, `a fold of at most 7 folded ${folded}`);
        assert.deepEqual(await stats(), before, `after fold round ${rounds + 1}`);
      }
      assert.equal(rounds, Math.floor(pending / 7) + 1);
      assert.equal(Number((await t.store.db.selectFrom('stats_deltas').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n), 0);
      assert.deepEqual(await stats(), before);
    });

    test('a bad period is refused in the envelope', async () => {
      const r = await call('GET', `/admin/stats?from=${today}&to=${addDays(today, -1)}`);
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'VALIDATION_ERROR');
      assert.equal(r.body.error.param, 'from');
      const long = await call('GET', `/admin/stats?from=${addDays(today, -366)}&to=${today}`);
      assert.equal(long.status, 400);
      assert.equal((await call('GET', `/admin/stats?from=${addDays(today, -365)}&to=${today}`)).status, 200);
      assert.equal((await call('GET', '/admin/stats?livemode=yes')).status, 400);
    });
  });

  test(`migration 0011 backfills the aggregates from the rows already there (${engine})`, async () => {
    const db = await testDatabase(engine);
    const store = Store.open({ url: db.url });
    try {
      await store.migrate('0009_refund_original_amounts_sign_in_failures');
      const row = (id: string, status: string, amount: number, createdAt: string) => ({
        id, account_id: 'acct_x', livemode: 0, status, amount, currency: 'BRL', method: 'pix', amount_refunded: 0,
        provider_attempts: 0, created_at: createdAt, updated_at: createdAt,
      });
      // 02:59 UTC is still the day before in São Paulo.
      await store.write((tx) => tx.insertInto('payments').values([
        row('pay_1', 'approved', 1000, '2026-03-02T02:59:00.000Z'), row('pay_2', 'approved', 234, '2026-03-02T03:00:00.000Z'), row('pay_3', 'expired', 50, '2026-03-02T03:00:00.000Z'),
      ] as never).execute());
      await store.migrate();
      const daily = async (account: string) => {
        const { rows } = await sql<{ day: string; status: string; count: number; amount: number }>`select day, status, count, amount from stats_daily where account_id = ${account} order by day, status`.execute(store.db);
        return rows.map((r) => ({ ...r, count: Number(r.count), amount: Number(r.amount) }));
      };
      // The account's rows, and every account's total ('*'): the same here, with one account.
      assert.deepEqual(await daily('*'), await daily('acct_x'));
      assert.deepEqual(await daily('acct_x'), [
        { day: '2026-03-01', status: 'approved', count: 1, amount: 1000 },
        { day: '2026-03-02', status: 'approved', count: 1, amount: 234 },
        { day: '2026-03-02', status: 'expired', count: 1, amount: 50 },
      ]);
      // From now on the triggers count: a new row, and a change of status (-1 old, +1 new).
      await store.write(async (tx) => {
        await tx.insertInto('payments').values(row('pay_4', 'pending', 70, '2026-03-02T12:00:00.000Z')).execute();
        await tx.updateTable('payments').set({ status: 'approved' }).where('id', '=', 'pay_4').execute();
        await tx.updateTable('payments').set({ updated_at: 'x' }).where('id', '=', 'pay_2').execute();
      });
      const deltas = await store.db.selectFrom('stats_deltas').select(['status', 'count', 'amount']).orderBy('seq').execute();
      // Net per status (how the deltas are laid out is the engine's: migration 0020).
      const net = new Map<string, [number, number]>();
      for (const d of deltas) {
        const [n, amount] = net.get(d.status) ?? [0, 0];
        net.set(d.status, [n + Number(d.count), amount + Number(d.amount)]);
      }
      assert.deepEqual(Object.fromEntries(net), { pending: [0, 0], approved: [1, 70] });
    } finally {
      await store.close();
      await db.drop();
    }
  });

  // Migration 0020 (issue 30): on PostgreSQL an INSERT is counted once per statement, one delta
  // per group; updates and deletes still per row. The counts must equal a GROUP BY over the
  // table whatever the mix, and deltas written before the migration must survive it.
  test(`migration 0020 keeps unfolded deltas, and a multi-row insert, updates and deletes count as a GROUP BY says; 0021's partial indexes serve the lookups (${engine})`, async () => {
    const db = await testDatabase(engine);
    const store = Store.open({ url: db.url });
    try {
      await store.migrate('0019_card_return_url');
      const row = (id: string, status: string, amount: number, createdAt: string, account = 'acct_x') => ({
        id, account_id: account, livemode: 0, status, amount, currency: 'BRL', method: 'card', amount_refunded: 0,
        provider_attempts: 0, created_at: createdAt, updated_at: createdAt,
      });
      await store.write((tx) => tx.insertInto('payments').values(row('pay_0', 'pending', 5, '2026-03-02T12:00:00.000Z')).execute());
      const deltasBefore = await store.db.selectFrom('stats_deltas').select(['kind', 'status', 'count', 'amount']).execute();
      assert.deepEqual(deltasBefore.map((d) => [d.kind, d.status, Number(d.count), Number(d.amount)]), [['payment', 'pending', 1, 5]]);
      await store.migrate();
      const deltasAfter = await store.db.selectFrom('stats_deltas').select(['kind', 'status', 'count', 'amount']).execute();
      assert.deepEqual(deltasAfter, deltasBefore, 'the unfolded delta survived the migration');

      // One statement: 40 rows in 3 groups (two accounts, two São Paulo days).
      const rows = Array.from({ length: 40 }, (_, i) => row(`pay_m${i}`, 'pending', 100 + i, i % 3 === 0 ? '2026-03-02T02:59:00.000Z' : '2026-03-02T03:00:00.000Z', i % 2 ? 'acct_x' : 'acct_y'));
      await store.write((tx) => tx.insertInto('payments').values(rows as never).execute());
      // 2 accounts x 2 days. PostgreSQL: a delta per group of the statement, beside pay_0's.
      // SQLite: a row per group, added to in place (pay_0's group is one of them).
      const deltaRows = Number((await store.db.selectFrom('stats_deltas').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      assert.equal(deltaRows, engine === 'postgres' ? 5 : 4);
      await store.write(async (tx) => {
        await tx.updateTable('payments').set({ status: 'approved' }).where('id', 'in', ['pay_m1', 'pay_m2', 'pay_m3', 'pay_0']).execute();
        await tx.updateTable('payments').set({ status: 'approved', amount_refunded: 50 }).where('id', '=', 'pay_m4').execute();
        await tx.updateTable('payments').set({ updated_at: 'not counted' }).where('id', '=', 'pay_m5').execute();
        await tx.deleteFrom('payments').where('id', 'in', ['pay_m6', 'pay_m7']).execute();
      });
      await store.write((tx) => foldStatsDeltas(tx, store.engine));
      const spDay = engine === 'sqlite' ? sql`date(created_at, '-3 hours')` : sql`to_char(created_at::timestamptz at time zone 'UTC' - interval '3 hours', 'YYYY-MM-DD')`;
      const { rows: truth } = await sql<{ account_id: string; day: string; status: string; count: number; amount: number; amount2: number }>`
        select account_id, ${spDay} as day, status, count(*) as count, sum(amount) as amount, sum(amount_refunded) as amount2
        from payments group by 1, 2, 3 order by 1, 2, 3`.execute(store.db);
      const { rows: counted } = await sql<{ account_id: string; day: string; status: string; count: number; amount: number; amount2: number }>`
        select account_id, day, status, count, amount, amount2 from stats_daily
        where kind = 'payment' and account_id <> '*' and count <> 0 order by 1, 2, 3`.execute(store.db);
      const norm = (rs: typeof truth) => rs.map((r) => ({ ...r, count: Number(r.count), amount: Number(r.amount), amount2: Number(r.amount2) }));
      assert.deepEqual(norm(counted), norm(truth));
      assert.equal(norm(truth).reduce((n, r) => n + r.count, 0), 39);

      // Migration 0021: the provider-id indexes hold only payments a connector account serves,
      // and the lookups by a provider's id still read them (SQLite's plan; PostgreSQL's planner
      // scans a table this small whatever the indexes).
      if (engine === 'sqlite') {
        const plan = async (q: { compile(): { sql: string; parameters: readonly unknown[] } }) => {
          const c = q.compile();
          return JSON.stringify((await store.db.executeQuery(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${c.sql}`, [...c.parameters]))).rows);
        };
        const byTxid = store.db.selectFrom('payments').select('id').where('connector_account_id', '=', 'ca_1').where('provider_txid', 'in', ['t1', 't2']).where('provider_txid', 'is not', null);
        assert.match(await plan(byTxid), /payments_provider_txid/);
        assert.match(await plan(store.db.selectFrom('payments').select('id').where('provider_txid', '=', 't1').where('connector_account_id', '=', 'ca_1')), /payments_provider_txid/);
        const byCharge = store.db.selectFrom('payments').select('id').where('connector_account_id', '=', 'ca_1').where('provider_charge_id', '=', 'c1');
        assert.match(await plan(byCharge), /payments_provider_charge/);
        const { rows: entries } = await sql<{ n: number }>`select count(*) as n from payments indexed by payments_provider_charge where connector_account_id is not null`.execute(store.db);
        assert.equal(Number(entries[0].n), 0, 'no entry for a payment no connector account serves');
      }
    } finally {
      await store.close();
      await db.drop();
    }
  });
}
