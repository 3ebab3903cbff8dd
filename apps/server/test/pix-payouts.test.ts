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
      const rcp = await recipientWithShare(750, { type: 'cpf', key: '529.982.247-25' });
      await settle();
      const s = await settlementOf(rcp);
      assert.equal(s.amount, 750);
      assert.equal(s.status, 'processing', JSON.stringify(s));
      assert.equal(s.payout.reference, payoutIdOf(s.id));
      assert.equal(s.payout.destination, 'Pix cpf ***.982.247-**');
      assert.deepEqual(s.pixKey, { type: 'cpf', key: '***.982.247-**' });
      const sent = efi.sent.get(s.payout.reference)!;
      assert.equal(sent.valor, '7.50', 'the settlement\'s amount, never more');
      assert.deepEqual(sent.favorecido, { chave: '52998224725', cnpj: '11222333000181' });
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
      const rcp = await recipientWithShare(200, { type: 'cpf', key: '52998224725' });
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
      const rcp = await recipientWithShare(100, { type: 'cpf', key: '52998224725' });
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
      for (let i = 0; i < 3; i++) ids.push(await recipientWithShare(50 + i, { type: 'cpf', key: '52998224725' }));
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
