import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startManualApp, signup, auth, type ManualApp, type Keys } from './helpers.js';
import { runSettlement } from '../src/modules/settlements/service.js';
import { audit } from '../src/modules/audit.js';
import { addDays, localDate } from '../src/modules/accounts/settings.js';
import { newId } from '../src/domain/ids.js';
import { SANDBOX_FAILING_ACCOUNT, SandboxProvider } from '../src/providers/sandbox.js';
import { CLI } from './cli.js';

const bank = (account = '12345-6') => ({ bankCode: '341', agency: '1234', account, accountType: 'checking' });

for (const engine of ENGINES) {
  describe(`marketplace money (${engine})`, () => {
    // A ManualClock: confirmations, refunds, payouts and settlement runs run on t.runDue(), and
    // "today" (availability, settlement dates) is the clock's.
    let t: ManualApp;
    let k: Keys;
    let seller: string;
    let platform: string;
    let courier: string;

    const api = async (method: 'GET' | 'POST', url: string, payload?: unknown, key = k.secretKey) => {
      const res = await t.app.inject({ method, url, headers: auth(key), ...(payload === undefined ? {} : { payload: payload as object }) });
      return { status: res.statusCode, body: res.json() };
    };
    const recipient = async (name: string, document: string, account?: string) => {
      const r = await api('POST', '/v1/recipients', { name, document, bankAccount: bank(account) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.id as string;
    };
    // Split rules are admin-only; the admin API has its own suite, so here the rule is a row.
    const rule = async (priority: number, splits: unknown[], conditions?: unknown, accountId = k.accountId) => {
      const id = newId('splitRule', t.clock.nowMs());
      const now = new Date(t.clock.nowMs()).toISOString();
      await t.store.write((tx) => tx.insertInto('split_rules').values({
        id, account_id: accountId, livemode: 0, priority, conditions: conditions ? JSON.stringify(conditions) : null,
        splits: JSON.stringify(splits), active: 1, description: null, created_at: now, updated_at: now,
      }).execute());
      return id;
    };
    const paidPix = async (amount: number) => {
      const p = await api('POST', '/v1/payments', { amount, method: 'pix' });
      const paid = await api('POST', `/v1/sandbox/payments/${p.body.id}/pay`);
      assert.equal(paid.status, 200);
      return paid.body;
    };
    const receivablesOf = async (paymentId: string) => (await api('GET', `/v1/receivables?paymentId=${paymentId}&limit=100`)).body.data as Array<{ id: string; amount: number; payee: { type: string; id: string }; status: string; availableOn: string; settlementId: string | null; splitRuleId: string | null }>;
    const auditOk = async () => {
      const report = await audit(t.store);
      assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
    };

    before(async () => {
      t = await startManualApp(engine);
      k = await signup(t);
      seller = await recipient('Loja do Zé LTDA', '11.222.333/0001-81');
      platform = await recipient('Plataforma SA', '12.ABC.345/01DE-35');
      courier = await recipient('Entregas Rápidas LTDA', '11222333000181');
    });
    after(async () => {
      await auditOk();
      await t.teardown();
    });

    test('worked example: R$ 100,00 by Pix, 10% platform + R$ 5,00 courier + 50% seller', async () => {
      const ruleId = await rule(1, [{ recipientId: platform, percentage: 10 }, { recipientId: courier, amount: 500 }, { recipientId: seller, percentage: 50 }], { method: 'pix' });
      const p = await paidPix(10000);
      assert.equal(p.feeAmount, 99);
      assert.equal(p.netAmount, 9901);
      const rcv = await receivablesOf(p.id);
      const by = (id: string) => rcv.filter((r) => r.payee.id === id).reduce((s, r) => s + r.amount, 0);
      assert.equal(by(platform), 990); // floor(9901 * 10%)
      assert.equal(by(courier), 500);
      assert.equal(by(seller), 4950); // floor(9901 * 50%)
      assert.equal(by(k.accountId), 9901 - 990 - 500 - 4950); // 3461: the remainder
      assert.equal(rcv.reduce((s, r) => s + r.amount, 0), 9901);
      for (const r of rcv) {
        assert.equal(r.splitRuleId, ruleId);
        assert.equal(r.status, 'pending');
        assert.equal(r.availableOn, localDate(t.clock.nowMs())); // Pix D+0
      }
      await t.store.write((tx) => tx.updateTable('split_rules').set({ active: 0 }).where('id', '=', ruleId).execute());
    });

    test('no rule: one receivable for the merchant; card is available D+30', async () => {
      const p = await api('POST', '/v1/payments', { amountInCents: 10000, method: 'credit_card', cardToken: 'tok_visa' });
      await t.runDue();
      assert.equal((await api('GET', `/v1/payments/${p.body.id}`)).body.status, 'approved');
      const rcv = await receivablesOf(p.body.id);
      assert.equal(rcv.length, 1);
      assert.deepEqual(rcv[0].payee, { type: 'merchant', id: k.accountId });
      assert.equal(rcv[0].amount, 9562);
      assert.equal(rcv[0].availableOn, addDays(localDate(t.clock.nowMs()), 30));
      assert.equal(rcv[0].splitRuleId, null);
    });

    test('priority and conditions pick the rule; a rule that does not fit is skipped', async () => {
      const big = await rule(5, [{ recipientId: seller, amount: 100000 }]); // does not fit small sales
      const cardOnly = await rule(6, [{ recipientId: seller, percentage: 20 }], { method: 'credit_card' });
      const fallback = await rule(7, [{ recipientId: platform, percentage: 1 }], { minAmount: 100, maxAmount: 5000 });
      const p = await paidPix(2000);
      const rcv = await receivablesOf(p.id);
      assert.ok(rcv.every((r) => r.splitRuleId === fallback), 'the first matching rule that fits applies');
      const large = await paidPix(200000);
      assert.ok((await receivablesOf(large.id)).every((r) => r.splitRuleId === big));
      await t.store.write((tx) => tx.updateTable('split_rules').set({ active: 0 }).where('id', 'in', [big, cardOnly, fallback]).execute());
    });

    test('receivables: get, filters, isolation', async () => {
      const p = await paidPix(3000);
      const [first] = await receivablesOf(p.id);
      const one = await api('GET', `/v1/receivables/${first.id}`);
      assert.equal(one.status, 200);
      assert.equal(one.body.object, 'receivable');
      const other = await signup(t, 'Other');
      assert.equal((await api('GET', `/v1/receivables/${first.id}`, undefined, other.secretKey)).status, 404);
      const merchantOnly = (await api('GET', `/v1/receivables?payeeType=merchant&limit=100`)).body.data;
      assert.ok(merchantOnly.length > 0 && merchantOnly.every((r: { payee: { type: string } }) => r.payee.type === 'merchant'));
      const sellerOnly = (await api('GET', `/v1/receivables?recipientId=${seller}&limit=100`)).body.data;
      assert.ok(sellerOnly.every((r: { payee: { id: string } }) => r.payee.id === seller));
      const future = (await api('GET', `/v1/receivables?availableOnGte=${addDays(localDate(t.clock.nowMs()), 1)}&limit=100`)).body.data;
      assert.ok(future.every((r: { availableOn: string }) => r.availableOn > localDate(t.clock.nowMs())));
    });

    test('refund before settlement reduces pending receivables in proportion; full refund cancels them', async () => {
      const ruleId = await rule(2, [{ recipientId: seller, percentage: 30 }]);
      const p = await paidPix(10000); // fee 99, net 9901: seller 2970, merchant 6931
      const before = await receivablesOf(p.id);
      assert.deepEqual(before.map((r) => r.amount).sort((a, b) => a - b), [2970, 6931]);
      const r1 = await api('POST', '/v1/refunds', { paymentId: p.id, amount: 5000 });
      assert.equal(r1.status, 200);
      assert.equal(r1.body.feeRefunded, 49); // floor(99 * 5000 / 10000)
      assert.equal(r1.body.netAmount, 4951);
      const mid = await receivablesOf(p.id);
      const total = mid.reduce((s, r) => s + r.amount, 0);
      assert.equal(total, 9901 - 4951);
      const sellerCut = 2970 - mid.find((r) => r.payee.id === seller)!.amount;
      assert.equal(sellerCut, Math.floor(4951 * 2970 / 9901));
      assert.equal((await api('GET', `/v1/payments/${p.id}`)).body.status, 'partially_refunded');
      const over = await api('POST', '/v1/refunds', { paymentId: p.id, amount: 5001 });
      assert.equal(over.status, 422);
      assert.equal(over.body.error.code, 'UNPROCESSABLE');
      const rest = await api('POST', '/v1/refunds', { paymentId: p.id });
      assert.equal(rest.body.amount, 5000);
      assert.equal(rest.body.feeRefunded, 50);
      const after = await receivablesOf(p.id);
      assert.ok(after.every((r) => r.amount === 0 && r.status === 'canceled'));
      const payment = (await api('GET', `/v1/payments/${p.id}`)).body;
      assert.equal(payment.status, 'refunded');
      assert.equal(payment.amountRefunded, 10000);
      const again = await api('POST', '/v1/refunds', { paymentId: p.id, amount: 1 });
      assert.equal(again.status, 409);
      assert.equal(again.body.error.code, 'INVALID_STATE');
      await t.runDue();
      assert.equal((await api('GET', `/v1/refunds/${rest.body.id}`)).body.status, 'succeeded', 'refund succeeded');
      const list = (await api('GET', `/v1/refunds?paymentId=${p.id}`)).body.data;
      assert.equal(list.length, 2);
      await t.store.write((tx) => tx.updateTable('split_rules').set({ active: 0 }).where('id', '=', ruleId).execute());
    });

    test('refunds of pending or unknown payments are refused', async () => {
      const pending = await api('POST', '/v1/payments', { amount: 100, method: 'pix' });
      const r = await api('POST', '/v1/refunds', { paymentId: pending.body.id });
      assert.equal(r.status, 409);
      assert.equal(r.body.error.code, 'INVALID_STATE');
      const unknown = await api('POST', '/v1/refunds', { paymentId: 'pay_nope' });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.param, 'paymentId');
      const zero = await api('POST', '/v1/refunds', { paymentId: pending.body.id, amount: 0 });
      assert.equal(zero.status, 400);
    });

    test('settlement: one per payee, everything due exactly once, even with runs at the same time', async () => {
      const ruleId = await rule(3, [{ recipientId: seller, percentage: 40 }]);
      await paidPix(5000);
      await paidPix(7000);
      const due = (await api('GET', '/v1/receivables?status=pending&limit=100')).body.data.filter((r: { availableOn: string }) => r.availableOn <= localDate(t.clock.nowMs()));
      const dueTotal = due.reduce((s: number, r: { amount: number }) => s + r.amount, 0);
      const provider = new SandboxProvider(t.store, async () => 'approve');
      const [a, b] = await Promise.all([
        runSettlement({ store: t.store, provider }, { trigger: 'admin' }),
        runSettlement({ store: t.store, provider }, { trigger: 'admin' }),
      ]);
      assert.equal(a.receivableCount + b.receivableCount, due.length, 'every due receivable joined exactly one settlement');
      assert.equal(a.totalAmount + b.totalAmount, dueTotal);
      const third = await runSettlement({ store: t.store, provider }, { trigger: 'admin' });
      assert.equal(third.settlementCount, 0, 'a repeated run settles nothing twice');
      const settlements = (await api('GET', '/v1/settlements?limit=100')).body.data;
      const keys = settlements.map((s: { payee: { type: string; id: string } }) => `${s.payee.type}:${s.payee.id}`);
      assert.equal(new Set(keys).size, keys.length, 'one settlement per payee');
      for (const s of settlements) {
        const items = (await api('GET', `/v1/settlements/${s.id}/receivables?limit=100`)).body.data;
        assert.equal(items.reduce((sum: number, r: { amount: number }) => sum + r.amount, 0), s.amount);
        assert.equal(items.length, s.receivableCount);
      }
      const sellerSettlement = settlements.find((s: { payee: { id: string } }) => s.payee.id === seller);
      assert.deepEqual(sellerSettlement.bankAccount, bank());
      await t.runDue();
      assert.equal((await api('GET', `/v1/settlements/${sellerSettlement.id}`)).body.status, 'paid', 'payout');
      const notYet = (await api('GET', '/v1/receivables?status=pending&limit=100')).body.data;
      assert.ok(notYet.every((r: { availableOn: string }) => r.availableOn > localDate(t.clock.nowMs())), 'only future receivables stay pending');
      await t.store.write((tx) => tx.updateTable('split_rules').set({ active: 0 }).where('id', '=', ruleId).execute());
      await auditOk();
    });

    test('refund after settlement: a negative receivable comes off the next settlement', async () => {
      const ruleId = await rule(4, [{ recipientId: courier, percentage: 50 }]);
      const provider = new SandboxProvider(t.store, async () => 'approve');
      const p = await paidPix(20000); // fee 198, net 19802: courier 9901, merchant 9901
      await runSettlement({ store: t.store, provider }, { trigger: 'admin' });
      const r = await api('POST', '/v1/refunds', { paymentId: p.id, amount: 10000 }); // fee back 99, net 9901
      assert.equal(r.status, 200);
      const rows = await receivablesOf(p.id);
      const negatives = rows.filter((x) => x.amount < 0);
      assert.equal(negatives.length, 2);
      assert.equal(negatives.reduce((s, x) => s + x.amount, 0), -9901);
      assert.ok(negatives.every((x) => x.status === 'pending' && x.availableOn === localDate(t.clock.nowMs())));
      const balanceBefore = (await api('GET', '/v1/balance')).body;
      const courierBalance = balanceBefore.recipients.find((x: { recipientId: string }) => x.recipientId === courier);
      assert.ok(courierBalance.available < 0, 'the courier owes the refund back');
      await paidPix(30000); // fee 297, net 29703: courier 14851, merchant 14852
      const run = await runSettlement({ store: t.store, provider }, { trigger: 'admin' });
      assert.equal(run.totalAmount, 29703 - 9901);
      const courierSettlements = (await api('GET', `/v1/settlements?recipientId=${courier}`)).body.data;
      assert.equal(courierSettlements[0].amount, 14851 - negatives.find((x) => x.payee.id === courier)!.amount * -1);
      await t.store.write((tx) => tx.updateTable('split_rules').set({ active: 0 }).where('id', '=', ruleId).execute());
      await auditOk();
    });

    test('a failed payout puts its receivables back for the next run', async () => {
      const closed = await recipient('Conta Encerrada LTDA', '11222333000181', SANDBOX_FAILING_ACCOUNT);
      const ruleId = await rule(0, [{ recipientId: closed, amount: 1000 }]);
      const provider = new SandboxProvider(t.store, async () => 'approve');
      const p = await paidPix(4000);
      await runSettlement({ store: t.store, provider }, { trigger: 'admin' });
      await t.runDue();
      const [failed] = (await api('GET', `/v1/settlements?recipientId=${closed}`)).body.data;
      assert.equal(failed.status, 'failed', 'the payout failed');
      assert.match(failed.failureReason, /closed/);
      const back = (await receivablesOf(p.id)).find((r) => r.payee.id === closed)!;
      assert.equal(back.status, 'pending');
      assert.equal(back.settlementId, null);
      // The recipient fixes the account; the next run pays it.
      await t.app.inject({ method: 'PATCH', url: `/v1/recipients/${closed}`, headers: auth(k.secretKey), payload: { bankAccount: bank('55555-5') } });
      await runSettlement({ store: t.store, provider }, { trigger: 'admin' });
      const retried = (await api('GET', `/v1/settlements?recipientId=${closed}`)).body.data;
      assert.equal(retried.length, 2);
      await t.runDue();
      assert.equal((await api('GET', `/v1/settlements/${retried[0].id}`)).body.status, 'paid', 'payout');
      await t.store.write((tx) => tx.updateTable('split_rules').set({ active: 0 }).where('id', '=', ruleId).execute());
    });

    test('admin trigger: POST /admin/settlement-runs behind the admin session and CSRF token', async () => {
      const { createAdminUser } = await import('../src/modules/admin/index.js');
      await createAdminUser(t.store, `ops-${engine}@example.com`, 'correct horse battery staple');
      const login = await t.app.inject({ method: 'POST', url: '/admin/session', payload: { email: `ops-${engine}@example.com`, password: 'correct horse battery staple' } });
      assert.equal(login.statusCode, 200);
      const cookie = (login.headers['set-cookie'] as string).split(';')[0];
      const csrf = login.json().csrfToken as string;
      await paidPix(1500);
      const noCsrf = await t.app.inject({ method: 'POST', url: '/admin/settlement-runs', headers: { cookie }, payload: {} });
      assert.equal(noCsrf.statusCode, 403);
      const withKey = await t.app.inject({ method: 'POST', url: '/admin/settlement-runs', headers: { authorization: `Bearer ${k.secretKey}` }, payload: {} });
      assert.equal(withKey.statusCode, 403);
      assert.equal(withKey.json().error.code, 'PERMISSION_DENIED');
      const noSession = await t.app.inject({ method: 'GET', url: '/admin/settlement-runs' });
      assert.equal(noSession.statusCode, 401);
      const started = await t.app.inject({ method: 'POST', url: '/admin/settlement-runs', headers: { cookie, 'x-csrf-token': csrf }, payload: { date: localDate(t.clock.nowMs()), reason: 'test run' } });
      assert.equal(started.statusCode, 200, started.body);
      assert.equal(started.json().object, 'settlement_run');
      assert.equal(started.json().trigger, 'admin');
      assert.equal(started.json().status, 'pending', 'the worker carries the run out');
      const finished = async (id: string) => {
        await t.runDue();
        const r = (await t.app.inject({ method: 'GET', url: `/admin/settlement-runs/${id}`, headers: { cookie } })).json();
        assert.equal(r.status, 'completed', 'the settlement run completed');
        return r;
      };
      const run = await finished(started.json().id);
      assert.ok(run.receivableCount >= 1);
      const again = await t.app.inject({ method: 'POST', url: '/admin/settlement-runs', headers: { cookie, 'x-csrf-token': csrf }, payload: { reason: 'test run again' } });
      assert.equal(again.statusCode, 200, again.body);
      assert.equal((await finished(again.json().id)).receivableCount, 0, 'nothing is settled twice');
      const list = await t.app.inject({ method: 'GET', url: '/admin/settlement-runs', headers: { cookie } });
      assert.equal(list.json().data[0].id, again.json().id);
      assert.equal(list.json().data[1].settlementCount, run.settlementCount);
      assert.equal((await t.app.inject({ method: 'POST', url: '/v1/settlement-runs', headers: auth(k.secretKey), payload: {} })).statusCode, 404);
    });

    test('cli audit passes on this store, and fails with a report when an invariant breaks', async () => {
      const { execFile } = await import('node:child_process');
      const { promisify } = await import('node:util');
      const cli = () => promisify(execFile)(process.execPath, [...CLI, 'audit'], { env: { ...process.env, DATABASE_URL: t.db.url }, cwd: new URL('..', import.meta.url).pathname });
      const ok = await cli();
      assert.match(ok.stdout, /audit passed/);
      // Break one: a centavo appears out of nowhere on a pending receivable.
      const [victim] = await t.store.db.selectFrom('receivables').select(['id', 'amount']).where('status', '=', 'pending').where('amount', '>', 0).limit(1).execute();
      await t.store.write((tx) => tx.updateTable('receivables').set({ amount: victim.amount + 1 }).where('id', '=', victim.id).execute());
      await assert.rejects(cli(), (e: { code: number; stdout: string }) => e.code === 1 && /FAIL every sale's receivables sum to its net value/.test(e.stdout) && /audit FAILED/.test(e.stdout));
      await t.store.write((tx) => tx.updateTable('receivables').set({ amount: victim.amount }).where('id', '=', victim.id).execute());
      assert.match((await cli()).stdout, /audit passed/);
    });

    test('balance: pending, available and settled for the merchant and per recipient', async () => {
      const b = (await api('GET', '/v1/balance')).body;
      assert.equal(b.object, 'balance');
      const rows = (await api('GET', '/v1/receivables?limit=100')).body.data as Array<{ amount: number; status: string; availableOn: string; payee: { type: string } }>;
      const merchant = rows.filter((r) => r.payee.type === 'merchant' && r.status !== 'canceled');
      assert.equal(b.merchant.settled, merchant.filter((r) => r.status === 'settled').reduce((s, r) => s + r.amount, 0));
      assert.equal(b.merchant.pending, merchant.filter((r) => r.status === 'pending' && r.availableOn > b.asOf).reduce((s, r) => s + r.amount, 0));
      assert.equal(b.merchant.available, merchant.filter((r) => r.status === 'pending' && r.availableOn <= b.asOf).reduce((s, r) => s + r.amount, 0));
      assert.ok(b.recipients.length >= 3);
    });
  });
}
