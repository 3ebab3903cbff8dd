import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { ENGINES, startApp, signup, auth, adminSession, type TestApp, type Keys } from './helpers.js';
import { ManualClock } from '../src/clock.js';
import { createPki, type Pki } from './fakes/pki.js';
import { startFakeEfiPayout, type FakeEfiPayout } from './fakes/fake-efi-payout.js';
import { newMasterKey, parseKeyring } from '../src/providers/secrets/envelope.js';
import { localDate } from '../src/modules/accounts/settings.js';
import { payoutReconcileJob } from '../src/modules/settlements/pix-payouts.js';
import { payoutIdOf } from '../src/providers/efi-payout/connector.js';
import { audit } from '../src/modules/audit.js';

// Payouts by Pix (issue 26) against the fake Efí send-Pix API (test/fakes/fake-efi-payout.ts:
// mutual TLS both ways with this run's certificates, Efí's homologation outcomes by amount:
// R$ 0,01-10,00 paid, 10,01-20,00 refused by webhook, above 20,00 refused at once). Each test
// sells to its own recipient through a split rule of a fixed share (conditions on the sale's
// amount), so its settlement holds exactly that share; the merchant has no payout account, so its
// own settlements stay held and never mix in. Time is a ManualClock: jobs run on runDue().

const DAY = 86_400_000;

for (const engine of ENGINES) {
  describe(`payouts by Pix at Efí (${engine})`, () => {
    let pki: Pki;
    let efi: FakeEfiPayout;
    let clock: ManualClock;
    let t: TestApp;
    let k: Keys;
    let admin: { cookie: string; csrf: string };
    let connectorId: string;
    let saleAmount = 10_000;

    const adminCall = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: object) =>
      t.app.inject({ method, url, headers: { cookie: admin.cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': admin.csrf }) }, ...(body ? { payload: body } : {}) });
    const api = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: object) =>
      t.app.inject({ method, url, headers: auth(k.secretKey), ...(body ? { payload: body } : {}) });
    const runDue = async () => {
      let n = 0;
      for (let i = 0; i < 5; i++) {
        const ran = (await t.worker.runDue()) + (await t.dispatcher.runDue());
        n += ran;
        if (ran === 0) break;
      }
      return n;
    };
    const advance = async (ms: number) => {
      clock.advance(ms);
      return runDue();
    };

    // A recipient (with a Pix key, or only a bank account) whose share of one card sale is `share`.
    const recipientWithShare = async (share: number, pixKey: { type: string; key: string } | null) => {
      const rcp = await api('POST', '/v1/recipients', {
        name: 'Parceiro LTDA', document: '11.222.333/0001-81', bankAccount: { bankCode: '341', agency: '1234', account: '12345-6', accountType: 'checking' },
        ...(pixKey ? { pixKey } : {}),
      });
      assert.equal(rcp.statusCode, 200, rcp.body);
      const amount = ++saleAmount;
      const rule = await adminCall('POST', '/admin/split-rules', {
        accountId: k.accountId, livemode: false, priority: 1, active: true, conditions: { minAmount: amount, maxAmount: amount },
        splits: [{ recipientId: rcp.json().id, amount: share }], reason: 'partner share',
      });
      assert.equal(rule.statusCode, 200, rule.body);
      const sale = await api('POST', '/v1/payments', { amount, method: 'credit_card', cardToken: 'tok_visa' });
      assert.equal(sale.statusCode, 200, sale.body);
      await runDue();
      assert.equal((await api('GET', `/v1/payments/${sale.json().id}`)).json().status, 'approved');
      return rcp.json().id as string;
    };
    // A settlement run a month later (cards are available D+30): its settlements, payouts sent.
    const settle = async () => {
      clock.advance(31 * DAY);
      admin = await adminSession(t); // a month later the session has expired
      const res = await adminCall('POST', '/admin/settlement-runs', { date: localDate(clock.nowMs()), reason: 'payout test' });
      assert.equal(res.statusCode, 200, res.body);
      await runDue();
    };
    const settlementOf = async (recipientId: string) => {
      const list = (await api('GET', `/v1/settlements?recipientId=${recipientId}&limit=10`)).json().data as Array<Record<string, any>>;
      return list[0];
    };
    const events = async (type: string, settlementId: string) =>
      ((await api('GET', `/v1/events?type=${type}&limit=100`)).json().data as Array<{ data: { object: { id: string; status: string } } }>).filter((e) => e.data.object.id === settlementId);
    const receivablesOf = async (recipientId: string) =>
      t.store.db.selectFrom('receivables').select(['status', 'settlement_id', 'amount']).where('payee_id', '=', recipientId).execute();

    before(async () => {
      pki = createPki({ caName: 'Payout run CA' });
      clock = new ManualClock(Date.UTC(2026, 10, 2, 13, 0));
      efi = await startFakeEfiPayout({ pki, clock });
      const server = pki.issueServer('pagamentos');
      t = await startApp(engine, { masterKeys: parseKeyring(newMasterKey('run')), payoutIntervalMs: 1000 }, {
        clock, worker: false, https: { key: server.key, cert: server.cert, ca: [pki.ca], requestCert: true, rejectUnauthorized: false },
      });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      t.config.publicUrl = `https://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      k = await signup(t, 'Loja Repasse');
      admin = await adminSession(t);
      // The platform's Efí account in homologation: it serves test mode, and its PSP pays out.
      const created = await adminCall('POST', '/admin/connector-accounts', {
        name: 'Efí homologação', connector: 'pix_api', dialect: 'efi', method: 'pix', environment: 'homologation',
        baseUrl: efi.baseUrl, tokenUrl: `${efi.origin}/oauth/token`, pixKey: efi.chave, clientId: efi.client.clientId, clientSecret: efi.client.clientSecret,
        certificatePem: efi.client.cert, privateKeyPem: efi.client.key, caPem: efi.client.ca, timeoutMs: 1500, reason: 'payouts',
      });
      assert.equal(created.statusCode, 200, created.body);
      connectorId = created.json().id;
      const registered = await adminCall('POST', `/admin/connector-accounts/${connectorId}/register-webhook`, { reason: 'callbacks' });
      assert.equal(registered.statusCode, 200, registered.body);
      assert.ok(efi.webhookUrl?.startsWith(t.config.publicUrl), 'our callback URL is registered on the platform\'s key');
    });
    after(async () => {
      t.app.server.closeAllConnections();
      const report = await audit(t.store);
      await t.teardown();
      await efi.close();
      pki.dispose();
      assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
    });

    test('the whole flow: a sale, a run, the payout sent by Pix key (processing), REALIZADO by the webhook read back (paid, end-to-end id)', async () => {
      const rcp = await recipientWithShare(750, { type: 'cnpj', key: '11.222.333/0001-81' });
      await settle();
      const s = await settlementOf(rcp);
      assert.equal(s.amount, 750);
      assert.equal(s.status, 'processing', JSON.stringify(s));
      assert.equal(s.payout.reference, payoutIdOf(s.id));
      assert.equal(s.payout.destination, 'Pix cnpj 11.***.***/0001-**');
      assert.deepEqual(s.pixKey, { type: 'cnpj', key: '11.***.***/0001-**' });
      const sent = efi.sent.get(s.payout.reference)!;
      assert.equal(sent.valor, '7.50', 'the settlement\'s amount, never more');
      assert.deepEqual(sent.favorecido, { chave: '11222333000181', cnpj: '11222333000181' });
      assert.equal((await events('settlement.processing', s.id)).length, 1);

      const settled = await efi.settleAll();
      assert.ok(settled.includes(s.payout.reference));
      assert.equal(efi.callbacks.at(-1)?.status, 200, 'our callback route took the webhook');
      await runDue();
      const paid = await settlementOf(rcp);
      assert.equal(paid.status, 'paid');
      assert.equal(paid.payout.endToEndId, sent.endToEndId);
      assert.equal(paid.paidAt, new Date(sent.liquidacaoMs!).toISOString());
      assert.equal((await events('settlement.paid', s.id)).length, 1);
      assert.ok((await receivablesOf(rcp)).every((r) => r.status === 'settled' && r.settlement_id === s.id));
      // The balance adds up: everything the recipient was owed is settled, nothing left over.
      const balance = (await api('GET', '/v1/balance')).json();
      const mine = balance.recipients.find((r: { recipientId?: string; id?: string }) => (r.recipientId ?? r.id) === rcp);
      assert.deepEqual([mine.pending, mine.available, mine.settled], [0, 0, 750], JSON.stringify(mine));
      const report = await audit(t.store);
      assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
    });

    test('a bank account without a Pix key: paid to the bank\'s ISPB with the recipient\'s CNPJ as holder', async () => {
      const rcp = await recipientWithShare(500, null);
      await settle();
      const s = await settlementOf(rcp);
      assert.equal(s.status, 'processing');
      assert.equal(s.payout.destination, '341 ag. 1234 c/c ***45-6');
      assert.deepEqual(efi.sent.get(s.payout.reference)!.favorecido, {
        contaBanco: { nome: 'Parceiro LTDA', cnpj: '11222333000181', codigoBanco: '60701190', agencia: '1234', conta: '123456', tipoConta: 'cacc' },
      });
      await efi.settleAll();
      await runDue();
      assert.equal((await settlementOf(rcp)).status, 'paid');
    });

    test('refused by webhook (R$ 10,01-20,00): failed with the PSP\'s reason, receivables back; the next run pays them in a new settlement', async () => {
      const rcp = await recipientWithShare(1_500, { type: 'email', key: 'Financeiro@Parceiro.com.br' });
      await settle();
      const s = await settlementOf(rcp);
      assert.equal(s.status, 'processing');
      await efi.settleAll();
      await runDue();
      const failed = (await api('GET', `/v1/settlements/${s.id}`)).json();
      assert.equal(failed.status, 'failed');
      assert.equal(failed.failureCode, 'conta_invalida');
      assert.match(failed.failureReason, /encerrada/);
      assert.equal((await events('settlement.failed', s.id)).length, 1);
      assert.ok((await receivablesOf(rcp)).every((r) => r.status === 'pending' && r.settlement_id === null), 'receivables back for the next run');
      // The payee fixed their account; in homologation the same amount would be refused again,
      // so the PSP's outcome is set to paid for the retry (the receivables are what matters here).
      const before = new Set(efi.sent.keys());
      await settle();
      const again = await settlementOf(rcp);
      assert.notEqual(again.id, s.id);
      assert.equal(again.amount, 1_500);
      const retry = [...efi.sent.values()].find((p) => !before.has(p.idEnvio) && p.idEnvio === again.payout.reference)!;
      retry.outcome = 'REALIZADO';
      await efi.settleAll();
      await runDue();
      assert.equal((await settlementOf(rcp)).status, 'paid');
      assert.ok((await receivablesOf(rcp)).every((r) => r.status === 'settled' && r.settlement_id === again.id), 'the refused receivables, paid in the next run');
    });

    test('a lost answer: the send was applied, the retry gets 409 and reads the payout back; one payout at the PSP', async () => {
      const rcp = await recipientWithShare(300, { type: 'evp', key: '123E4567-E89B-12D3-A456-426614174000' });
      // The answer to the send is lost, and the read-back right after it finds the PSP down: the
      // outcome is unknown, so the job retries later.
      efi.inject({ kind: 'drop', operation: 'PUT /v3/gn/pix' });
      efi.inject({ kind: 'unavailable', operation: 'GET /v2/gn/pix/enviados/id-envio', times: 2 });
      await settle();
      const s = await settlementOf(rcp);
      assert.equal(s.status, 'processing');
      const id = payoutIdOf(s.id);
      assert.ok(efi.sent.has(id), 'the PSP took it though the answer was lost');
      const job = await t.store.db.selectFrom('jobs').select(['run_at_ms', 'last_error']).where('type', '=', 'settlement.payout').where('payload', 'like', `%${s.id}%`).executeTakeFirstOrThrow();
      assert.match(String(job.last_error), /read|answer|unreachable|PSP/i);
      await advance(Number(job.run_at_ms) - clock.nowMs());
      const puts = efi.requests.filter((r) => r.method === 'PUT' && r.path === `/v3/gn/pix/${id}`);
      assert.deepEqual(puts.map((r) => r.status ?? 'dropped'), ['dropped', 409], 'sent again with the same idEnvio, answered 409');
      assert.equal([...efi.sent.keys()].filter((k) => k === id).length, 1);
      assert.equal((await settlementOf(rcp)).status, 'processing', 'read back: EM_PROCESSAMENTO');
      assert.equal(await t.store.db.selectFrom('jobs').select('id').where('type', '=', 'settlement.payout').where('payload', 'like', `%${s.id}%`).executeTakeFirst(), undefined, 'the payout job is done');
      await efi.settleAll();
      await runDue();
      assert.equal((await settlementOf(rcp)).status, 'paid');
    });

    test('503 at the send: nothing sent, the job retries after its back-off and sends the same payout', async () => {
      const rcp = await recipientWithShare(400, { type: 'cnpj', key: '11.222.333/0001-81' });
      efi.inject({ kind: 'unavailable', operation: 'PUT /v3/gn/pix', times: 1 });
      efi.inject({ kind: 'unavailable', operation: 'GET /v2/gn/pix/enviados/id-envio', times: 2 });
      await settle();
      const s = await settlementOf(rcp);
      assert.equal(s.status, 'processing', 'sent (or being sent): the outcome is unknown');
      assert.equal(efi.sent.has(payoutIdOf(s.id)), false);
      const job = await t.store.db.selectFrom('jobs').select('run_at_ms').where('type', '=', 'settlement.payout').where('payload', 'like', `%${s.id}%`).executeTakeFirstOrThrow();
      await advance(Number(job.run_at_ms) - clock.nowMs());
      assert.equal(efi.sent.get(payoutIdOf(s.id))?.valor, '4.00');
      await efi.settleAll();
      await runDue();
      assert.equal((await settlementOf(rcp)).status, 'paid');
    });

    test('a webhook that never comes: the reconciliation reads the payout and finishes it', async () => {
      const rcp = await recipientWithShare(200, { type: 'email', key: 'financeiro@parceiro.com.br' });
      await settle();
      const s = await settlementOf(rcp);
      efi.holdCallbacks = true;
      await efi.settleAll();
      efi.holdCallbacks = false;
      await runDue();
      assert.equal((await settlementOf(rcp)).status, 'processing', 'no webhook: nothing moved');
      assert.equal(await payoutReconcileJob(t.paymentDeps, t.app.log), 0, 'not stale yet');
      clock.advance(t.config.payoutReconcileAfterMs);
      assert.ok(await payoutReconcileJob(t.paymentDeps, t.app.log) >= 1);
      const paid = await settlementOf(rcp);
      assert.equal(paid.status, 'paid');
      assert.equal(paid.payout.endToEndId, efi.sent.get(s.payout.reference)!.endToEndId);
    });

    test('a forged webhook (REALIZADO for a payout still processing) changes nothing: the read back says EM_PROCESSAMENTO', async () => {
      const rcp = await recipientWithShare(100, { type: 'email', key: 'financeiro@parceiro.com.br' });
      await settle();
      const s = await settlementOf(rcp);
      const sent = efi.sent.get(s.payout.reference)!;
      const forged = { pix: [{ ...efi.webhookItem(sent), status: 'REALIZADO', horario: new Date(clock.nowMs()).toISOString() }] };
      // Sent by the PSP's own certificate: a notification that lies, which only the read catches.
      const delivery = await efi.notify([], forged);
      assert.equal(delivery.status, 200);
      await runDue();
      assert.equal((await settlementOf(rcp)).status, 'processing');
      assert.equal((await events('settlement.paid', s.id)).length, 0);
      // And straight at the route, with no certificate at all (inject has no TLS): the same.
      const res = await t.app.inject({ method: 'POST', url: new URL(`${efi.webhookUrl}/pix`).pathname, payload: forged });
      assert.equal(res.statusCode, 200);
      await runDue();
      assert.equal((await settlementOf(rcp)).status, 'processing');
      // The PSP settles it a moment later: its own webhook (another body than the forged one,
      // which the store of notifications would take for a repeat) makes the read that pays it.
      clock.advance(1000);
      await efi.settleAll();
      await runDue();
      assert.equal((await settlementOf(rcp)).status, 'paid');
    });

    test('sends are spaced per source account: one per PAYOUT_INTERVAL_MS, the rest wait as jobs', async () => {
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push(await recipientWithShare(50 + i, { type: 'email', key: 'financeiro@parceiro.com.br' }));
      await settle();
      const statuses = await Promise.all(ids.map(async (id) => (await settlementOf(id)).status));
      assert.equal(statuses.filter((x) => x === 'processing').length, 1, `one sent at once: ${statuses.join(', ')}`);
      await advance(1000);
      await advance(1000);
      const after = await Promise.all(ids.map(async (id) => (await settlementOf(id)).status));
      assert.deepEqual(after, ['processing', 'processing', 'processing']);
      const times = ids.map(() => 0);
      for (const [i, id] of ids.entries()) times[i] = Date.parse((await settlementOf(id)).payout.sentAt);
      const sorted = [...times].sort((a, b) => a - b);
      assert.ok(sorted[1] - sorted[0] >= 1000 && sorted[2] - sorted[1] >= 1000, `spaced: ${sorted.join(', ')}`);
      await efi.settleAll();
      await runDue();
    });

    // ---- The platform's balance at the PSP, holds, retries (issue 26, second part) ----

    const adminAs = (who: { cookie: string; csrf: string }, method: 'GET' | 'POST', url: string, body?: object) =>
      t.app.inject({ method, url, headers: { cookie: who.cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': who.csrf }) }, ...(body ? { payload: body } : {}) });
    const byAge = (a: Record<string, any>, b: Record<string, any>) => String(a.createdAt).localeCompare(String(b.createdAt)) || String(a.id).localeCompare(String(b.id));
    const settledOf = async (recipientId: string) => {
      const balance = (await api('GET', '/v1/balance')).json();
      return balance.recipients.find((r: { recipientId?: string; id?: string }) => (r.recipientId ?? r.id) === recipientId) as { pending: number; available: number; settled: number };
    };

    test('a balance that fits only some: the oldest are sent, the rest held (insufficient_psp_balance); topped up, the next run pays the held ones first; balance and audit add up', async () => {
      const shares = [400, 500, 300];
      const ids: string[] = [];
      for (const share of shares) ids.push(await recipientWithShare(share, { type: 'evp', key: '123e4567-e89b-12d3-a456-426614174001' }));
      efi.saldoCents = 1_000; // R$ 10,00: not the R$ 12,00 owed
      const balanceReads = efi.requests.filter((r) => r.path === '/v2/gn/saldo').length;
      await settle();
      assert.equal(efi.requests.filter((r) => r.path === '/v2/gn/saldo').length, balanceReads + 1, 'the balance is read once, before the run\'s payouts');
      // Sends are spaced (one a second here): let every slot come.
      await advance(1000);
      await advance(1000);
      const first = (await Promise.all(ids.map(settlementOf))).sort(byAge);
      // Oldest first, and never a younger one before an older one that does not fit.
      let left = 1_000;
      let blocked = false;
      const expected = first.map((s) => {
        const fits = !blocked && s.amount <= left;
        if (fits) left -= s.amount;
        else blocked = true;
        return fits ? 'processing' : 'held';
      });
      assert.deepEqual(first.map((s) => s.status), expected, JSON.stringify(first.map((s) => [s.amount, s.status])));
      assert.ok(expected.includes('held') && expected.includes('processing'));
      for (const s of first.filter((x) => x.status === 'held')) {
        assert.equal(s.holdReason, 'insufficient_psp_balance');
        assert.equal(s.payout, null, 'nothing sent');
        assert.equal(efi.sent.has(payoutIdOf(s.id)), false);
        assert.ok((await events('settlement.updated', s.id)).some((e) => e.data.object.status === 'held'));
        assert.ok((await receivablesOf(s.payee.id)).every((r) => r.status === 'settled' && r.settlement_id === s.id), 'a held settlement keeps its receivables');
      }
      const sentFirst = first.filter((s) => s.status === 'processing').reduce((sum, s) => sum + s.amount, 0);
      assert.equal(efi.saldoCents, 1_000 - sentFirst, 'never overdrawn');
      await efi.settleAll();
      await runDue();

      // Topped up: the next run sends the held ones (the same settlements, their own idEnvio).
      efi.saldoCents += 5_000;
      const topped = efi.saldoCents;
      await settle();
      await advance(1000);
      await advance(1000);
      const second = await Promise.all(ids.map(settlementOf));
      for (const s of second) assert.ok(first.some((f) => f.id === s.id), 'no new settlement: the held ones were released');
      const released = second.filter((s) => first.find((f) => f.id === s.id)!.status === 'held');
      assert.ok(released.every((s) => s.status === 'processing' && s.holdReason === null && s.payout.reference === payoutIdOf(s.id)), JSON.stringify(released));
      assert.equal(efi.saldoCents, topped - released.reduce((sum, s) => sum + s.amount, 0));
      await efi.settleAll();
      await runDue();
      for (const [i, id] of ids.entries()) {
        const s = await settlementOf(id);
        assert.equal(s.status, 'paid');
        assert.equal(efi.sent.get(payoutIdOf(s.id))!.valor, (shares[i] / 100).toFixed(2), 'each payout is exactly its settlement');
        assert.deepEqual(await settledOf(id), { ...(await settledOf(id)), pending: 0, available: 0, settled: shares[i] });
      }
      const report = await audit(t.store);
      assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
      efi.saldoCents = 100_000_000; // plenty again for the tests below
    });

    test('the balance cannot be read: the run\'s payouts are held (psp_balance_unavailable); an operator\'s retry (admin only, with a reason, audited) sends one now', async () => {
      const rcp = await recipientWithShare(350, { type: 'email', key: 'caixa@parceiro.com.br' });
      efi.inject({ kind: 'unavailable', operation: 'GET /v2/gn/saldo', times: 4 });
      await settle();
      efi.clearFaults();
      const s = await settlementOf(rcp);
      assert.equal(s.status, 'held');
      assert.equal(s.holdReason, 'psp_balance_unavailable');
      assert.equal(efi.sent.has(payoutIdOf(s.id)), false);

      const viewer = await adminSession(t, 'viewer');
      const denied = await adminAs(viewer, 'POST', `/admin/settlements/${s.id}/retry`, { reason: 'balance is fine' });
      assert.equal(denied.statusCode, 403);
      assert.equal(denied.json().error.code, 'PERMISSION_DENIED');
      const noReason = await adminCall('POST', `/admin/settlements/${s.id}/retry`, {});
      assert.equal(noReason.statusCode, 400);
      assert.equal(noReason.json().error.param, 'reason');
      assert.equal((await settlementOf(rcp)).status, 'held', 'refused: nothing changed');

      const retried = await adminCall('POST', `/admin/settlements/${s.id}/retry`, { reason: 'Efí balance checked by phone' });
      assert.equal(retried.statusCode, 200, retried.body);
      assert.equal(retried.json().id, s.id);
      assert.equal(retried.json().status, 'pending');
      assert.equal(retried.json().accountName, 'Loja Repasse');
      const entry = (await adminCall('GET', `/admin/audit-log?objectId=${s.id}&action=settlement.retry_payout`)).json().data[0];
      assert.equal(entry.reason, 'Efí balance checked by phone');
      assert.equal(entry.before.status, 'held');
      assert.equal(entry.after.status, 'pending');
      await runDue();
      assert.equal((await settlementOf(rcp)).status, 'processing');
      const again = await adminCall('POST', `/admin/settlements/${s.id}/retry`, { reason: 'twice' });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().error.code, 'INVALID_STATE');
      await efi.settleAll();
      await runDue();
      assert.equal((await settlementOf(rcp)).status, 'paid');
      assert.equal((await adminCall('POST', '/admin/settlements/stl_nope/retry', { reason: 'x' })).statusCode, 404);
    });

    test('retrying a failed payout: a new settlement of the payee\'s due receivables, sent at once; once per failed settlement', async () => {
      const rcp = await recipientWithShare(1_200, { type: 'email', key: 'pagar@parceiro.com.br' });
      await settle();
      const s = await settlementOf(rcp);
      await efi.settleAll();
      await runDue();
      const failed = (await api('GET', `/v1/settlements/${s.id}`)).json();
      assert.equal(failed.status, 'failed');
      const retried = await adminCall('POST', `/admin/settlements/${s.id}/retry`, { reason: 'Partner reopened the account (ticket 77)' });
      assert.equal(retried.statusCode, 200, retried.body);
      const fresh = retried.json();
      assert.notEqual(fresh.id, s.id);
      assert.equal(fresh.amount, 1_200);
      assert.deepEqual(fresh.payee, { type: 'recipient', id: rcp });
      assert.ok((await receivablesOf(rcp)).every((r) => r.status === 'settled' && r.settlement_id === fresh.id));
      const entry = (await adminCall('GET', `/admin/audit-log?objectId=${s.id}&action=settlement.retry_payout`)).json().data[0];
      assert.equal(entry.after.retriedBy, fresh.id);
      assert.equal(entry.before.retriedBy, null);
      const twice = await adminCall('POST', `/admin/settlements/${s.id}/retry`, { reason: 'again' });
      assert.equal(twice.statusCode, 409);
      assert.match(twice.json().error.message, new RegExp(fresh.id));
      await advance(1000);
      await advance(1000);
      const sending = (await api('GET', `/v1/settlements/${fresh.id}`)).json();
      assert.equal(sending.status, 'processing');
      efi.sent.get(sending.payout.reference)!.outcome = 'REALIZADO';
      await efi.settleAll();
      await runDue();
      assert.equal((await api('GET', `/v1/settlements/${fresh.id}`)).json().status, 'paid');
      assert.deepEqual(await settledOf(rcp), { ...(await settledOf(rcp)), pending: 0, settled: 1_200 });
      const report = await audit(t.store);
      assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
    });

    test('holder check: a CPF/CNPJ key of someone else is refused at registration; one only detectable at send fails with a clear reason (ours, or the PSP\'s for an e-mail key)', async () => {
      const base = { name: 'Titular LTDA', document: '11.222.333/0001-81', bankAccount: { bankCode: '341', agency: '1', account: '1-1', accountType: 'checking' } };
      for (const pixKey of [{ type: 'cpf', key: '529.982.247-25' }, { type: 'cnpj', key: '11.444.777/0001-61' }]) {
        const res = await api('POST', '/v1/recipients', { ...base, pixKey });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().error.param, 'pixKey.key');
        assert.match(res.json().error.message, /of someone else/);
        assert.ok(!res.body.includes('52998224725') && !res.body.includes('11444777000161'), 'the document is not echoed');
      }
      const mine = await api('POST', '/v1/recipients', { ...base, pixKey: { type: 'cnpj', key: '11222333000181' } });
      assert.equal(mine.statusCode, 200, mine.body);
      const patched = await api('PATCH', `/v1/recipients/${mine.json().id}`, { pixKey: { type: 'cpf', key: '52998224725' } });
      assert.equal(patched.statusCode, 400);
      assert.equal(patched.json().error.param, 'pixKey.key');
      assert.equal((await api('GET', `/v1/recipients/${mine.json().id}`)).json().pixKey.type, 'cnpj', 'nothing changed');
      // The merchant's payout account: the key must be the holder document given with it.
      const acct = await adminCall('PATCH', `/admin/accounts/${k.accountId}/payout-bank-account`, {
        bankAccount: { bankCode: '341', agency: '1', account: '1-1', accountType: 'checking' }, holderDocument: '529.982.247-25', pixKey: { type: 'cnpj', key: '11222333000181' }, reason: 'test',
      });
      assert.equal(acct.statusCode, 400, acct.body);
      assert.equal(acct.json().error.param, 'pixKey.key');
      const badDoc = await adminCall('PATCH', `/admin/accounts/${k.accountId}/payout-bank-account`, { bankAccount: { bankCode: '341', agency: '1', account: '1-1', accountType: 'checking' }, holderDocument: '123', reason: 'test' });
      assert.equal(badDoc.statusCode, 400);
      assert.equal(badDoc.json().error.param, 'holderDocument');
      // A matching one is taken; the account shows the holder's document masked, never whole.
      const other = await signup(t, 'Loja Titular');
      const set = await adminCall('PATCH', `/admin/accounts/${other.accountId}/payout-bank-account`, {
        bankAccount: { bankCode: '341', agency: '1', account: '1-1', accountType: 'checking' }, holderDocument: '11.222.333/0001-81', pixKey: { type: 'cnpj', key: '11222333000181' }, reason: 'test',
      });
      assert.equal(set.statusCode, 200, set.body);
      assert.equal(set.json().payoutHolderDocument, '11.***.***/0001-**');
      const entry = (await adminCall('GET', `/admin/audit-log?objectId=${other.accountId}&action=account.set_payout_bank_account`)).json().data[0];
      assert.equal(entry.after.payoutHolderDocument, '11.***.***/0001-**', 'the audit log shows it masked too');

      // Detectable only at send, ours: a key stored before the check (a row written directly).
      const legacy = await recipientWithShare(220, { type: 'email', key: 'antigo@parceiro.com.br' });
      await t.store.write((tx) => tx.updateTable('recipients').set({ pix_key_type: 'cpf', pix_key: '52998224725' }).where('id', '=', legacy).execute());
      // The PSP's: an e-mail key whose owner at the DICT is another document.
      const stranger = await recipientWithShare(230, { type: 'email', key: 'de.outro@exemplo.com.br' });
      efi.keyOwners.set('de.outro@exemplo.com.br', '52998224725');
      await settle();
      await advance(1000);
      const ours = await settlementOf(legacy);
      assert.equal(ours.status, 'failed');
      assert.equal(ours.failureCode, 'holder_document_mismatch');
      assert.match(ours.failureReason, /not the holder's document/);
      assert.equal(efi.sent.has(payoutIdOf(ours.id)), false, 'nothing sent');
      const theirs = await settlementOf(stranger);
      assert.equal(theirs.status, 'failed');
      assert.equal(theirs.failureCode, 'documento_favorecido_divergente');
      assert.match(theirs.failureReason, /não pertence/);
      assert.equal(efi.sent.has(payoutIdOf(theirs.id)), false);
      for (const id of [legacy, stranger]) assert.ok((await receivablesOf(id)).every((r) => r.status === 'pending'), 'receivables back for the next run');
      // Fixed, they are paid by the next run (cleared so no later test pays them by surprise).
      await api('PATCH', `/v1/recipients/${legacy}`, { pixKey: { type: 'cnpj', key: '11222333000181' } });
      efi.keyOwners.set('de.outro@exemplo.com.br', '11222333000181');
      await settle();
      await advance(1000);
      await efi.settleAll();
      await runDue();
      assert.equal((await settlementOf(legacy)).status, 'paid');
      assert.equal((await settlementOf(stranger)).status, 'paid');
    });

    test('the daily statement: a payee\'s settlements paid on one São Paulo date, with end-to-end ids and the total; the clock moved across midnight', async () => {
      const a = await recipientWithShare(610, { type: 'email', key: 'a@parceiro.com.br' });
      const b = await recipientWithShare(620, { type: 'email', key: 'b@parceiro.com.br' });
      await settle();
      await advance(1000);
      await advance(1000);
      const [sa, sb] = [await settlementOf(a), await settlementOf(b)];
      assert.equal(sa.status, 'processing');
      assert.equal(sb.status, 'processing');
      // A is paid at 23:59:30 in São Paulo, B a minute later: the next day there.
      const day = localDate(clock.nowMs());
      const nextMidnight = Date.parse(`${day}T00:00:00.000-03:00`) + DAY;
      clock.set(nextMidnight - 30_000);
      await efi.settleAll([sa.payout.reference]);
      await runDue();
      clock.set(nextMidnight + 30_000);
      await efi.settleAll([sb.payout.reference]);
      await runDue();
      const next = localDate(clock.nowMs());
      assert.notEqual(next, day);
      const statement = async (q: string) => {
        const res = await api('GET', `/v1/settlements/daily-statement?${q}`);
        assert.equal(res.statusCode, 200, res.body);
        return res.json();
      };
      const aDay = await statement(`recipientId=${a}&date=${day}`);
      assert.equal(aDay.object, 'daily_statement');
      assert.equal(aDay.timeZone, 'America/Sao_Paulo');
      assert.equal(aDay.from, new Date(nextMidnight - DAY).toISOString());
      assert.equal(aDay.to, new Date(nextMidnight).toISOString());
      assert.deepEqual(aDay.payee, { type: 'recipient', id: a });
      assert.deepEqual(aDay.data.map((i: { settlementId: string }) => i.settlementId), [sa.id]);
      assert.equal(aDay.data[0].endToEndId, efi.sent.get(sa.payout.reference)!.endToEndId);
      assert.equal(aDay.data[0].reference, sa.payout.reference);
      assert.equal(aDay.data[0].amount, 610);
      assert.equal(aDay.data[0].paidAt, new Date(nextMidnight - 30_000).toISOString());
      assert.deepEqual([aDay.count, aDay.total], [1, 610]);
      assert.deepEqual([(await statement(`recipientId=${b}&date=${day}`)).count, (await statement(`recipientId=${b}&date=${day}`)).total], [0, 0], 'B was paid after midnight');
      // No date: today in São Paulo by the Clock, now the next day.
      const bToday = await statement(`recipientId=${b}`);
      assert.equal(bToday.date, next);
      assert.deepEqual(bToday.data.map((i: { settlementId: string; endToEndId: string }) => [i.settlementId, i.endToEndId]), [[sb.id, efi.sent.get(sb.payout.reference)!.endToEndId]]);
      assert.equal(bToday.total, 620);
      assert.equal((await statement(`recipientId=${a}`)).count, 0);
      // The merchant's own (it has none paid: its settlements are held for its payout account).
      const own = await statement(`date=${day}`);
      assert.deepEqual([own.payee, own.count, own.total, own.data], [{ type: 'merchant', id: k.accountId }, 0, 0, []]);
      // Bad input: a clear error naming the parameter.
      const unknown = await api('GET', '/v1/settlements/daily-statement?recipientId=rcp_nope');
      assert.equal(unknown.statusCode, 400);
      assert.equal(unknown.json().error.code, 'VALIDATION_ERROR');
      assert.equal(unknown.json().error.param, 'recipientId');
      const badDate = await api('GET', '/v1/settlements/daily-statement?date=2026-13-40');
      assert.equal(badDate.statusCode, 400);
      assert.equal(badDate.json().error.param, 'date');
      admin = await adminSession(t); // the clock moved hours: a fresh session for the tests below
    });

    test('refused at once (above R$ 20,00): failed at the send with Efí\'s code, never processing at the PSP', async () => {
      const rcp = await recipientWithShare(2_500, { type: 'phone', key: '+5511987654321' });
      await settle();
      const s = await settlementOf(rcp);
      assert.equal(s.status, 'failed', JSON.stringify(s));
      assert.equal(s.failureCode, 'envio_recusado');
      assert.equal(efi.sent.has(payoutIdOf(s.id)), false);
      assert.ok((await receivablesOf(rcp)).every((r) => r.status === 'pending'));
      // (Its receivables fail again at every later run in homologation: this test runs last.)
    });

    test('registration: an unknown bank code and malformed Pix keys are refused, naming the field', async () => {
      const base = { name: 'X LTDA', document: '11.222.333/0001-81', bankAccount: { bankCode: '341', agency: '1', account: '1-1', accountType: 'checking' } };
      const unknownBank = await api('POST', '/v1/recipients', { ...base, bankAccount: { ...base.bankAccount, bankCode: '999' } });
      assert.equal(unknownBank.statusCode, 400, unknownBank.body);
      assert.equal(unknownBank.json().error.param, 'bankAccount.bankCode');
      for (const pixKey of [
        { type: 'cpf', key: '123.456.789-00' }, { type: 'cnpj', key: '11222333000180' }, { type: 'email', key: 'sem-arroba' },
        { type: 'phone', key: '11987654321' }, { type: 'phone', key: '+14155550100' }, { type: 'evp', key: 'not-a-uuid' },
        { type: 'email', key: `${'a'.repeat(70)}@exemplo.com` },
      ]) {
        const res = await api('POST', '/v1/recipients', { ...base, pixKey });
        assert.equal(res.statusCode, 400, `${JSON.stringify(pixKey)}: ${res.body}`);
        assert.equal(res.json().error.param, 'pixKey.key');
      }
      const ok = await api('POST', '/v1/recipients', { ...base, pixKey: { type: 'email', key: 'Loja@Exemplo.com.br' } });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(ok.json().pixKey, { type: 'email', key: 'loja@exemplo.com.br' });
      const cleared = await api('PATCH', `/v1/recipients/${ok.json().id}`, { pixKey: null });
      assert.equal(cleared.statusCode, 200, cleared.body);
      assert.equal(cleared.json().pixKey, null);
    });
  });
}
