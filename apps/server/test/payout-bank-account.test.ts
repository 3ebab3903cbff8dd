import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startManualApp, signup, auth, testDatabase, type ManualApp, type Keys } from './helpers.js';
import { createAdminUser } from '../src/modules/admin/index.js';
import { localDate } from '../src/modules/accounts/settings.js';
import { Store } from '../src/store/index.js';
import { newId } from '../src/domain/ids.js';
import { SANDBOX_FAILING_ACCOUNT } from '../src/providers/sandbox.js';
import { audit } from '../src/modules/audit.js';

// A merchant account's payout bank account: set through the admin API (validated as a
// recipient's), snapshotted into the merchant's settlements; without one, the merchant's
// settlement is held with a reason, and setting it releases the held settlements to payout.

const BANK = { bankCode: '001', agency: '1234-5', account: '98765-X', accountType: 'checking' };

for (const engine of ENGINES) {
  describe(`merchant payout bank account (${engine})`, () => {
    // A ManualClock: settlement runs and payouts run on t.runDue(), when the test says.
    let t: ManualApp;
    let k: Keys;
    let admin: Record<string, string>;
    const api = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = auth(k.secretKey)) => {
      const res = await t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
      return { status: res.statusCode, body: res.json(), headers: res.headers, raw: res.body };
    };
    const paidPix = async (amount: number, keys = k) => {
      const p = await api('POST', '/v1/payments', { amount, method: 'pix' }, auth(keys.secretKey));
      assert.equal((await api('POST', `/v1/sandbox/payments/${p.body.id}/pay`, undefined, auth(keys.secretKey))).status, 200);
      return p.body.id as string;
    };
    // A run is carried out by the worker: its job, then the payouts it makes, run on runDue().
    const run = async () => {
      const res = await api('POST', '/admin/settlement-runs', { date: localDate(t.clock.nowMs()), reason: 'Test run' }, admin);
      assert.equal(res.status, 200, res.raw);
      await t.runDue();
      const r = await api('GET', `/admin/settlement-runs/${res.body.id}`, undefined, admin);
      assert.equal(r.body.status, 'completed', 'the settlement run completed');
      return r.body;
    };
    const merchantSettlements = async (keys = k) => (await api('GET', '/v1/settlements?payeeType=merchant&limit=100', undefined, auth(keys.secretKey))).body.data as Array<Record<string, any>>;
    const setPayout = (accountId: string, bankAccount: unknown, key?: string, reason = 'Bank letter on file') =>
      api('PATCH', `/admin/accounts/${accountId}/payout-bank-account`, { bankAccount, reason }, { ...admin, ...(key ? { 'idempotency-key': key } : {}) });

    before(async () => {
      t = await startManualApp(engine);
      k = await signup(t);
      const email = `payout-${engine}-${process.pid}@example.com`;
      await createAdminUser(t.store, email, 'a long enough passphrase');
      const login = await t.app.inject({ method: 'POST', url: '/admin/session', payload: { email, password: 'a long enough passphrase' } });
      admin = { cookie: (login.headers['set-cookie'] as string).split(';')[0], 'x-csrf-token': login.json().csrfToken };
    });
    after(async () => {
      const report = await audit(t.store);
      assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
      await t.teardown();
    });

    test('without a payout bank account the merchant\'s settlement is held with its reason, and nothing is paid', async () => {
      const account = await api('GET', `/admin/accounts/${k.accountId}`, undefined, { cookie: admin.cookie });
      assert.equal(account.body.payoutBankAccount, null);
      await paidPix(10_000);
      const r = await run();
      assert.ok(r.settlementCount >= 1);
      const [held] = await merchantSettlements();
      assert.equal(held.status, 'held');
      assert.equal(held.holdReason, 'no_payout_bank_account');
      assert.equal(held.bankAccount, null);
      assert.equal(held.amount, 10_000 - 99);
      assert.deepEqual((await api('GET', `/v1/settlements?status=held`)).body.data.map((s: { id: string }) => s.id), [held.id]);
      // Nothing is on its way to a bank: no payout job, and its receivables are in it (settled once).
      const jobs = await t.store.db.selectFrom('jobs').select('payload').where('type', '=', 'settlement.payout').execute();
      assert.ok(!jobs.some((j) => j.payload.includes(held.id)), 'no payout job for a held settlement');
      const items = (await api('GET', `/v1/settlements/${held.id}/receivables`)).body.data;
      assert.equal(items.length, held.receivableCount);
      const event = (await api('GET', '/v1/events?type=settlement.created&limit=5')).body.data.find((e: { data: { object: { id: string } } }) => e.data.object.id === held.id);
      assert.equal(event.data.object.status, 'held');
      assert.equal(event.data.object.holdReason, 'no_payout_bank_account');
    });

    test('the payout bank account is validated as a recipient\'s and only for a known account', async () => {
      const bad = await setPayout(k.accountId, { ...BANK, account: '98765' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.param, 'bankAccount.account');
      assert.match(bad.body.error.message, /check digit/);
      assert.ok(!bad.raw.includes('98765'), 'the account number is not echoed');
      const missing = await setPayout(k.accountId, { bankCode: '001', agency: '1234' });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error.param, 'bankAccount.account');
      const unknown = await setPayout('acct_doesnotexist', BANK);
      assert.equal(unknown.status, 404);
      const noCsrf = await api('PATCH', `/admin/accounts/${k.accountId}/payout-bank-account`, { bankAccount: BANK }, { cookie: admin.cookie });
      assert.equal(noCsrf.status, 403);
      assert.equal((await merchantSettlements())[0].status, 'held', 'a refused change releases nothing');
    });

    test('setting it moves money, so it needs a reason and the admin role; the audit entry shows before and after', async () => {
      const auditRows = async () => Number((await t.store.db.selectFrom('admin_audit_log').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const rows = await auditRows();
      for (const reason of [undefined, '', '   ']) {
        const res = await api('PATCH', `/admin/accounts/${k.accountId}/payout-bank-account`, { bankAccount: BANK, ...(reason === undefined ? {} : { reason }) }, admin);
        assert.equal(res.status, 400, `reason ${JSON.stringify(reason)}: ${res.raw}`);
        assert.equal(res.body.error.code, 'VALIDATION_ERROR');
        assert.equal(res.body.error.param, 'reason');
      }
      const viewerEmail = `payout-viewer-${engine}-${process.pid}@example.com`;
      await createAdminUser(t.store, viewerEmail, 'a long enough passphrase', 'viewer');
      const login = await t.app.inject({ method: 'POST', url: '/admin/session', payload: { email: viewerEmail, password: 'a long enough passphrase' } });
      const viewer = { cookie: (login.headers['set-cookie'] as string).split(';')[0], 'x-csrf-token': login.json().csrfToken };
      const denied = await api('PATCH', `/admin/accounts/${k.accountId}/payout-bank-account`, { bankAccount: BANK, reason: 'viewer tries' }, viewer);
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.code, 'PERMISSION_DENIED');
      const seen = await api('GET', `/admin/accounts/${k.accountId}`, undefined, { cookie: viewer.cookie });
      assert.equal(seen.status, 200, 'a viewer sees the account');
      assert.equal(seen.body.payoutBankAccount, null, 'nothing was set');
      assert.equal((await merchantSettlements())[0].status, 'held', 'nothing was released');
      assert.equal(await auditRows(), rows, 'no audit entry for a refused change');
    });

    test('setting it releases the held settlements to payout at once, with its snapshot', async () => {
      const [held] = await merchantSettlements();
      const set = await setPayout(k.accountId, { ...BANK, agency: '1234-x' }, 'payout-1');
      assert.equal(set.status, 200, set.raw);
      assert.deepEqual(set.body.payoutBankAccount, { ...BANK, agency: '1234-X' });
      const released = (await api('GET', `/v1/settlements/${held.id}`)).body;
      assert.equal(released.status, 'pending', 'released, its payout not yet run');
      assert.equal(released.holdReason, null);
      assert.deepEqual(released.bankAccount, { ...BANK, agency: '1234-X' });
      const updated = (await api('GET', '/v1/events?type=settlement.updated')).body.data;
      assert.ok(updated.some((e: { data: { object: { id: string; status: string } } }) => e.data.object.id === held.id && e.data.object.status === 'pending'));
      await t.runDue();
      assert.equal((await api('GET', `/v1/settlements/${held.id}`)).body.status, 'paid', 'the released settlement is paid');
      // The same request again is the stored answer and releases nothing twice.
      const again = await setPayout(k.accountId, { ...BANK, agency: '1234-x' }, 'payout-1');
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.raw, set.raw);
      const payouts = await t.store.db.selectFrom('settlements').select('id').where('id', '=', held.id).where('status', '=', 'paid').execute();
      assert.equal(payouts.length, 1);
      assert.deepEqual((await api('GET', `/admin/accounts/${k.accountId}`, undefined, { cookie: admin.cookie })).body.payoutBankAccount, { ...BANK, agency: '1234-X' });
      const entries = (await api('GET', `/admin/audit-log?objectId=${k.accountId}&action=account.set_payout_bank_account`, undefined, { cookie: admin.cookie })).body.data;
      assert.equal(entries.length, 1, 'one entry: the replay wrote none');
      assert.equal(entries[0].reason, 'Bank letter on file');
      assert.equal(entries[0].before.payoutBankAccount, null);
      assert.deepEqual(entries[0].after.payoutBankAccount, { ...BANK, agency: '1234-X' });
    });

    test('later settlements take the account\'s payout bank account as it is then', async () => {
      await setPayout(k.accountId, { ...BANK, account: '55555-5' });
      await paidPix(5_000);
      await run();
      const [latest] = await merchantSettlements();
      assert.notEqual(latest.status, 'held');
      assert.deepEqual(latest.bankAccount, { ...BANK, account: '55555-5' });
      assert.equal((await api('GET', `/v1/settlements/${latest.id}`)).body.status, 'paid');
    });

    test('a payout refused by the bank fails and its receivables wait for the next run, as for a recipient', async () => {
      const other = await signup(t, 'Closed account merchant');
      await setPayout(other.accountId, { ...BANK, account: SANDBOX_FAILING_ACCOUNT });
      await paidPix(3_000, other);
      await run();
      const [failed] = await merchantSettlements(other);
      assert.equal(failed.status, 'failed', 'the payout failed');
      assert.match(failed.failureReason, /closed/);
      await setPayout(other.accountId, BANK);
      await run();
      const retried = await merchantSettlements(other);
      assert.equal(retried.length, 2);
      assert.equal((await api('GET', `/v1/settlements/${retried[0].id}`, undefined, auth(other.secretKey))).body.status, 'paid', 'paid on the next run');
    });
  });

  test(`migration 0005 adds the payout bank account and the hold reason to existing rows (${engine})`, async () => {
    const db = await testDatabase(engine);
    const store = Store.open({ url: db.url });
    try {
      await store.migrate('0004_backoffice');
      const now = new Date().toISOString();
      const accountId = newId('account', Date.now());
      await store.write(async (tx) => {
        await tx.insertInto('accounts').values({ id: accountId, name: 'Old', email: null, live_enabled: 0, settings: '{}', created_at: now }).execute();
        await tx.insertInto('settlements').values({
          id: newId('settlement', Date.now()), account_id: accountId, livemode: 0, run_id: 'str_old', payee_type: 'merchant', payee_id: accountId, amount: 100, receivable_count: 1,
          status: 'paid', bank_account: null, settlement_date: '2026-01-01', paid_at: now, failure_reason: null, created_at: now, updated_at: now,
        } as never).execute();
      });
      assert.deepEqual(await store.migrate('0005_payout_bank_account'), ['0005_payout_bank_account']);
      const account = await store.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
      assert.equal(account.payout_bank_account, null);
      const settlement = await store.db.selectFrom('settlements').selectAll().where('account_id', '=', accountId).executeTakeFirstOrThrow();
      assert.equal(settlement.hold_reason, null);
      assert.equal(settlement.status, 'paid');
    } finally {
      await store.close();
      await db.drop();
    }
  });
}
