import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { ENGINES, startApp, signup, auth, adminSession, eventually, type TestApp, type Keys } from './helpers.js';
import { createPki, type Pki } from './fakes/pki.js';
import { startFakePixPsp, type FakePixPsp } from './fakes/fake-pix-psp.js';
import { createKey } from '../src/modules/accounts/service.js';
import { newMasterKey, parseKeyring } from '../src/providers/secrets/envelope.js';
import { pixReconcileJob } from '../src/modules/payments/live-pix.js';
import { audit } from '../src/modules/audit.js';
import { hasError, isDynamicPix, parsePix } from 'pix-utils';

// Live Pix through the standard API Pix (issue 25), against the fake PSP (test/fakes/): mutual
// TLS both ways, the contract checked on every request and answer. The whole flow, then each
// fault the issue lists.

for (const engine of ENGINES) {
  describe(`live Pix at a PSP (${engine})`, () => {
    let pki: Pki;
    let psp: FakePixPsp;
    let t: TestApp;
    let k: Keys;
    let live: string;
    let admin: { cookie: string; csrf: string };
    let connectorId: string;
    let recipientId: string;

    const adminCall = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: object) =>
      t.app.inject({ method, url, headers: { cookie: admin.cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': admin.csrf }) }, ...(body ? { payload: body } : {}) });
    const api = (method: 'GET' | 'POST', url: string, body?: object, headers: Record<string, string> = {}) =>
      t.app.inject({ method, url, headers: auth(live, headers), ...(body ? { payload: body } : {}) });
    const payment = async (id: string) => (await api('GET', `/v1/payments/${id}`)).json();
    const newPix = async (amount: number, extra: object = {}) => {
      const res = await api('POST', '/v1/payments', { amount, method: 'pix', ...extra });
      assert.equal(res.statusCode, 200, res.body);
      const row = await t.store.db.selectFrom('payments').select(['provider_txid']).where('id', '=', res.json().id).executeTakeFirstOrThrow();
      return { ...res.json(), txid: row.provider_txid as string };
    };
    const reconcile = () => pixReconcileJob(t.paymentDeps, t.app.log);
    const count = async (table: 'payments' | 'pix_received') => Number((await t.store.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

    before(async () => {
      pki = createPki({ caName: 'Test run CA' });
      psp = await startFakePixPsp({ pki });
      const server = pki.issueServer('pagamentos');
      // HTTPS with an optional client certificate: the callback route refuses one that did not
      // verify against the PSP's CA (here the run's CA, which also signed the fake's).
      t = await startApp(engine, { masterKeys: parseKeyring(newMasterKey('run')) }, { https: { key: server.key, cert: server.cert, ca: [pki.ca], requestCert: true, rejectUnauthorized: false } });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      t.config.publicUrl = `https://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      k = await signup(t, 'Loja Real');
      await t.store.write((tx) => tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', k.accountId).execute());
      live = (await createKey(t.store, k.accountId, 'secret', true)).key;
      admin = await adminSession(t);

      // The connector account through the admin API, and our callback registered at the PSP.
      const created = await adminCall('POST', '/admin/connector-accounts', {
        name: 'PSP de teste', connector: 'pix_api', dialect: 'standard', method: 'pix', environment: 'production',
        baseUrl: psp.baseUrl, tokenUrl: psp.tokenUrl, pixKey: psp.chaves[0], clientId: psp.client.clientId, clientSecret: psp.client.clientSecret,
        certificatePem: psp.client.cert, privateKeyPem: psp.client.key, caPem: psp.client.ca, timeoutMs: 1500, reason: 'going live',
      });
      assert.equal(created.statusCode, 200, created.body);
      connectorId = created.json().id;
      const registered = await adminCall('POST', `/admin/connector-accounts/${connectorId}/register-webhook`, { reason: 'callbacks' });
      assert.equal(registered.statusCode, 200, registered.body);
      const tested = await adminCall('POST', `/admin/connector-accounts/${connectorId}/test`);
      assert.equal(tested.json().ok, true, tested.body);

      // A split: 20% to a recipient, on live sales.
      const rcp = await api('POST', '/v1/recipients', { name: 'Parceiro LTDA', document: '11.222.333/0001-81', bankAccount: { bankCode: '341', agency: '1234', account: '12345-6', accountType: 'checking' } });
      assert.equal(rcp.statusCode, 200, rcp.body);
      recipientId = rcp.json().id;
      const rule = await adminCall('POST', '/admin/split-rules', { accountId: k.accountId, livemode: true, priority: 1, active: true, splits: [{ recipientId, percentage: 20 }], reason: 'partner share' });
      assert.equal(rule.statusCode, 200, rule.body);
    });
    after(async () => {
      t.app.server.closeAllConnections();
      await t.teardown();
      await psp.close();
      pki.dispose();
      assert.deepEqual(psp.contractViolations, [], 'every request we sent kept the API Pix contract');
    });

    test('the whole flow: created at the PSP, paid, approved by the callback; partial refund, then the rest; split and audit hold', async () => {
      const p = await newPix(10_000, { description: 'Pedido 1' });
      assert.equal(p.status, 'pending');
      assert.equal(p.livemode, true);
      assert.equal(p.pix.copyPaste, psp.getCob(p.txid)?.pixCopiaECola, 'the PSP\'s own copia e cola');
      assert.match(p.pix.qrCodeSvg, /^<svg/);
      assert.equal(p.pix.txid, p.txid, 'the public API shows the charge\'s txid');
      assert.equal(p.pix.endToEndId, null, 'no end-to-end id before it is paid');
      await psp.pay(p.txid);
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      const approved = await eventually(async () => { const got = await payment(p.id); return got.status === 'approved' && got; }, 'approved by the callback');
      assert.equal(approved.amount, 10_000);
      assert.match(approved.pix.endToEndId, /^E[a-zA-Z0-9]{31}$/, 'once paid, the Pix\'s end-to-end id');
      const receivables = (await api('GET', `/v1/receivables?paymentId=${p.id}&limit=100`)).json().data as Array<{ payee: { type: string; id: string }; amount: number }>;
      assert.ok(receivables.some((r) => r.payee.type === 'recipient' && r.payee.id === recipientId), 'the split made the recipient a receivable');

      const e2eid = (await t.store.db.selectFrom('payments').select('provider_e2eid').where('id', '=', p.id).executeTakeFirstOrThrow()).provider_e2eid!;
      assert.equal(approved.pix.endToEndId, e2eid);
      const partial = await api('POST', '/v1/refunds', { paymentId: p.id, amount: 3_000 });
      assert.equal(partial.json().kind, 'requested');
      assert.equal(partial.statusCode, 200, partial.body);
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      const returnId = await eventually(async () => (await t.store.db.selectFrom('refunds').select('provider_refund_id').where('id', '=', partial.json().id).executeTakeFirst())?.provider_refund_id, 'devolução asked');
      const processing = (await api('GET', `/v1/refunds/${partial.json().id}`)).json();
      assert.equal(processing.status, 'pending', 'processing until the PSP says DEVOLVIDO');
      const devolucao = (psp.getPix(e2eid)?.devolucoes as Array<{ id: string; rtrId: string }>).find((d) => d.id === returnId)!;
      assert.deepEqual(processing.pixReturn, { id: returnId, rtrId: devolucao.rtrId, nature: 'ORIGINAL', status: 'EM_PROCESSAMENTO' }, 'the refund is a devolução, with its ids at the PSP');
      await psp.settleRefund(e2eid, returnId, 'DEVOLVIDO');
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      const settled = await eventually(async () => { const r = (await api('GET', `/v1/refunds/${partial.json().id}`)).json(); return r.status === 'succeeded' && r; }, 'refund succeeded after the callback');
      assert.deepEqual(settled.pixReturn, { id: returnId, rtrId: devolucao.rtrId, nature: 'ORIGINAL', status: 'DEVOLVIDO' });
      const event = await t.store.db.selectFrom('events').select('data').where('type', '=', 'refund.succeeded').where('data', 'like', `%${partial.json().id}%`).executeTakeFirstOrThrow();
      assert.equal(JSON.parse(event.data).object.pixReturn.status, 'DEVOLVIDO', 'the refund.succeeded event carries the devolução');

      const rest = await api('POST', '/v1/refunds', { paymentId: p.id });
      assert.equal(rest.statusCode, 200, rest.body);
      assert.equal(rest.json().amount, 7_000);
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      const restId = await eventually(async () => (await t.store.db.selectFrom('refunds').select('provider_refund_id').where('id', '=', rest.json().id).executeTakeFirst())?.provider_refund_id, 'second devolução asked');
      await psp.settleRefund(e2eid, restId, 'DEVOLVIDO');
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      await eventually(async () => (await api('GET', `/v1/refunds/${rest.json().id}`)).json().status === 'succeeded', 'second refund succeeded');
      assert.equal((await payment(p.id)).status, 'refunded');
      assert.equal((psp.getPix(e2eid)?.devolucoes as Array<{ valor: string }>).reduce((s, d) => s + Math.round(Number(d.valor) * 100), 0), 10_000, 'the PSP returned exactly the sale');
      const report = await audit(t.store);
      assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
    });

    test('a PSP that answers only the charge\'s location: the payment carries a dynamic BR Code pointing at it', async () => {
      psp.omitCopyPaste = true;
      try {
        const p = await newPix(2_222);
        const cob = psp.getCob(p.txid) as { location: string; pixCopiaECola?: string };
        assert.equal(cob.pixCopiaECola, undefined, 'the PSP gave no copia e cola');
        const decoded = parsePix(p.pix.copyPaste);
        if (hasError(decoded)) assert.fail(`pix-utils rejected the BR Code: ${decoded.message}`);
        assert.ok(isDynamicPix(decoded), 'a dynamic BR Code, not one for a key of ours');
        assert.equal(decoded.url, cob.location);
        assert.ok(!p.pix.copyPaste.includes(t.config.pixKey), 'never the sandbox\'s placeholder key');
        await psp.pay(p.txid);
        // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
        await eventually(async () => (await payment(p.id)).status === 'approved', 'approved');
      } finally {
        psp.omitCopyPaste = false;
      }
    });

    test('a hosted checkout session in live mode pays by Pix at the PSP: session, Pix, callback, sync, approved, complete', async () => {
      const session = await api('POST', '/v1/checkout/sessions', { amount: 3_990, methods: ['pix', 'credit_card'], description: 'Pedido checkout' });
      assert.equal(session.statusCode, 200, session.body);
      const s = session.json();
      assert.equal(s.livemode, true);
      const page = (key?: string) => ({ authorization: `Bearer ${s.clientSecret}`, ...(key ? { 'idempotency-key': key } : {}) });
      const paid = await t.app.inject({ method: 'POST', url: `/v1/checkout/sessions/${s.id}/client/pay`, headers: page('checkout-live-pix'), payload: { method: 'pix' } });
      assert.equal(paid.statusCode, 200, paid.body);
      const view = paid.json();
      assert.equal(view.payment.method, 'pix');
      assert.equal(view.payment.status, 'pending');
      const row = await t.store.db.selectFrom('payments').select(['provider_txid', 'connector_account_id', 'checkout_session_id']).where('id', '=', view.payment.id).executeTakeFirstOrThrow();
      assert.equal(row.connector_account_id, connectorId, 'made at the PSP, never the sandbox');
      assert.equal(row.checkout_session_id, s.id);
      const cob = psp.getCob(row.provider_txid!) as { pixCopiaECola: string; valor: { original: string } };
      assert.equal(cob.valor.original, '39.90');
      assert.equal(view.payment.pix.copyPaste, cob.pixCopiaECola, 'the page shows the PSP\'s own copia e cola');
      assert.equal(view.payment.pix.txid, row.provider_txid);
      // The sandbox's pay endpoint refuses a live session's payment: only the PSP can pay it.
      const sandboxPay = await t.app.inject({ method: 'POST', url: `/v1/sandbox/payments/${view.payment.id}/pay`, headers: auth(live) });
      assert.notEqual(sandboxPay.statusCode, 200, 'live mode never reaches the sandbox');
      await psp.pay(row.provider_txid!);
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      const done = await eventually(async () => {
        const v = (await t.app.inject({ method: 'GET', url: `/v1/checkout/sessions/${s.id}/client`, headers: page() })).json();
        return v.status === 'complete' && v.payment?.status === 'approved' && v;
      }, 'the session complete, its payment approved by the PSP\'s callback and our read');
      assert.match(done.payment.pix.endToEndId, /^E[a-zA-Z0-9]{31}$/);
      const merchant = (await api('GET', `/v1/checkout/sessions/${s.id}`)).json();
      assert.equal(merchant.status, 'complete');
      assert.equal(merchant.paymentId, view.payment.id);
      const events = await t.store.db.selectFrom('events').select('type').where('data', 'like', `%${s.id}%`).execute();
      assert.ok(events.some((e) => e.type === 'checkout_session.completed'), 'checkout_session.completed announced');
    });

    test('a lost callback: reconciliation alone approves it', async () => {
      const p = await newPix(2_500);
      psp.holdCallbacks();
      await psp.pay(p.txid);
      psp.discardHeldCallbacks();
      assert.equal((await payment(p.id)).status, 'pending');
      await reconcile();
      assert.equal((await payment(p.id)).status, 'approved');
      const received = await t.store.db.selectFrom('pix_received').selectAll().where('payment_id', '=', p.id).execute();
      assert.equal(received[0]?.status, 'matched');
    });

    test('503 and 504 at create: 503 PROVIDER_UNAVAILABLE with Retry-After, nothing stored, the key free', async () => {
      const before = await count('payments');
      for (const kind of ['unavailable', 'gateway-timeout'] as const) {
        psp.inject({ kind, operation: 'PUT /cob/{txid}', times: 2 });
        const res = await api('POST', '/v1/payments', { amount: 1_000, method: 'pix' }, { 'idempotency-key': `fault-${kind}` });
        psp.clearFaults();
        assert.equal(res.statusCode, 503, res.body);
        assert.equal(res.json().error.code, 'PROVIDER_UNAVAILABLE');
        assert.ok(Number(res.headers['retry-after']) > 0);
        assert.equal(await count('payments'), before);
        const retry = await api('POST', '/v1/payments', { amount: 1_000, method: 'pix' }, { 'idempotency-key': `fault-${kind}` });
        assert.equal(retry.statusCode, 200, 'the same key works once the PSP is back');
        assert.equal(await count('payments'), before + 1);
        await t.store.write((tx) => tx.deleteFrom('jobs').where('payload', 'like', `%${retry.json().id}%`).execute());
        await t.store.write((tx) => tx.deleteFrom('events').where('type', '=', 'payment.created').where('data', 'like', `%${retry.json().id}%`).execute());
        await t.store.write((tx) => tx.deleteFrom('payments').where('id', '=', retry.json().id).execute());
      }
    });

    test('an answer slower than our timeout: 503, nothing stored', async () => {
      const before = await count('payments');
      psp.inject({ kind: 'slow', operation: 'PUT /cob/{txid}', applied: false, times: 2 });
      psp.inject({ kind: 'slow', operation: 'GET /cob/{txid}', applied: false, times: 2 });
      const res = await api('POST', '/v1/payments', { amount: 1_000, method: 'pix' });
      psp.clearFaults();
      psp.releaseHeldAnswers();
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(await count('payments'), before);
    });

    test('the charge created, then the connection dropped: read back, the same charge, one payment', async () => {
      psp.inject({ kind: 'drop', operation: 'PUT /cob/{txid}', applied: true });
      const p = await newPix(1_234);
      const puts = psp.requests.filter((r) => r.operation === 'PUT /cob/{txid}' && r.path.endsWith(p.txid));
      assert.equal(puts.length, 1, 'not created a second time: read back with GET');
      assert.equal(p.pix.copyPaste, psp.getCob(p.txid)?.pixCopiaECola);
    });

    test('a revoked token: fetched again on the 401, the call succeeds', async () => {
      psp.revokeTokens();
      const p = await newPix(999);
      assert.equal(p.status, 'pending');
    });

    test('duplicate, out-of-order callbacks approve once; a forged one (even with the PSP\'s certificate) approves nothing', async () => {
      const a = await newPix(1_100);
      const b = await newPix(1_200);
      psp.holdCallbacks();
      await psp.pay(a.txid);
      await psp.pay(b.txid);
      await psp.releaseCallbacks({ order: 'reverse', duplicate: true });
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      for (const p of [a, b]) await eventually(async () => (await payment(p.id)).status === 'approved', 'approved');
      for (const p of [a, b]) {
        const events = await t.store.db.selectFrom('events').select('id').where('type', '=', 'payment.approved').where('data', 'like', `%${p.id}%`).execute();
        assert.equal(events.length, 1, 'one approval');
      }
      const c = await newPix(1_300);
      await psp.forgeCallback({ txid: c.txid, valor: '13.00', certificate: 'psp' });
      // The callback was answered after its sync job was stored: wait for that job to finish.
      t.worker.kick();
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      await eventually(async () => (await t.store.db.selectFrom('jobs').select('id').where('type', '=', 'payment.sync').execute()).length === 0, 'sync done');
      assert.equal((await payment(c.id)).status, 'pending', 'the PSP says ATIVA: nothing approved');
    });

    test('a callback without the PSP\'s certificate is refused; one for an unknown txid moves nothing', async () => {
      const p = await newPix(1_400);
      psp.holdCallbacks();
      const paid = await psp.pay(p.txid);
      psp.discardHeldCallbacks();
      const delivery = await psp.sendCallbackFor(paid.pix.endToEndId, 'none');
      assert.equal(delivery.status, 403);
      assert.equal((await payment(p.id)).status, 'pending');
      const unknown = await psp.receivePix({ valor: '5.00', txid: 'desconhecido0000000000000001' });
      void unknown;
      const before = await count('pix_received');
      await reconcile();
      assert.equal((await payment(p.id)).status, 'approved', 'reconciliation found the real one');
      const unmatched = await t.store.db.selectFrom('pix_received').selectAll().where('status', '=', 'unmatched').execute();
      assert.ok(unmatched.some((r) => r.txid === 'desconhecido0000000000000001'), 'the unknown Pix is shown to operators');
      assert.ok((await count('pix_received')) > before);
      const listed = await adminCall('GET', '/admin/pix-received?status=unmatched');
      assert.ok(listed.json().data.some((r: { txid: string }) => r.txid === 'desconhecido0000000000000001'));
    });

    test('paid after it expired: returned to the payer, announced, never kept', async () => {
      const p = await newPix(1_500, { pixExpiresInSeconds: 60 });
      await t.store.write((tx) => tx.updateTable('jobs').set({ run_at_ms: 0 }).where('type', '=', 'payment.expire').where('payload', 'like', `%${p.id}%`).execute());
      t.worker.kick();
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      await eventually(async () => (await payment(p.id)).status === 'expired', 'expired');
      assert.equal(psp.getCob(p.txid)?.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR', 'our expiry removed the charge at the PSP');
      const paid = await psp.payAfterExpiry(p.txid);
      await reconcile();
      const got = await payment(p.id);
      assert.equal(got.status, 'expired');
      const e2eid = paid.pix.endToEndId;
      assert.equal((psp.getPix(e2eid)?.devolucoes as unknown[]).length, 1, 'a devolução of the late money');
      const row = await t.store.db.selectFrom('pix_received').selectAll().where('e2eid', '=', e2eid).executeTakeFirstOrThrow();
      assert.equal(row.status, 'late_returned');
      const events = await t.store.db.selectFrom('events').select('type').where('type', '=', 'payment.late_pix_returned').where('data', 'like', `%${p.id}%`).execute();
      assert.equal(events.length, 1);
      await reconcile();
      assert.equal((psp.getPix(e2eid)?.devolucoes as unknown[]).length, 1, 'returned once');
    });

    test('a MED return on a paid Pix is recorded as a refund against the payment and its receivables', async () => {
      const p = await newPix(4_000);
      await psp.pay(p.txid);
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      await eventually(async () => (await payment(p.id)).status === 'approved', 'approved');
      const e2eid = (await t.store.db.selectFrom('payments').select('provider_e2eid').where('id', '=', p.id).executeTakeFirstOrThrow()).provider_e2eid!;
      await psp.startMedReturn(e2eid, { natureza: 'MED_FRAUDE', valor: '15.00' });
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      const refund = await eventually(async () => t.store.db.selectFrom('refunds').selectAll().where('payment_id', '=', p.id).executeTakeFirst(), 'MED recorded');
      assert.equal(refund.amount, 1_500);
      assert.equal(refund.kind, 'med_fraud');
      const pub = (await api('GET', `/v1/refunds/${refund.id}`)).json();
      assert.equal(pub.kind, 'med_fraud');
      assert.equal(pub.pixReturn.nature, 'MED_FRAUDE');
      assert.equal(pub.pixReturn.id, refund.provider_refund_id);
      assert.match(pub.pixReturn.rtrId, /^D/, 'the return\'s rtrId');
      // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
      await eventually(async () => (await t.store.db.selectFrom('refunds').select('status').where('id', '=', refund.id).executeTakeFirst())?.status === 'succeeded', 'MED refund succeeded');
      assert.equal((await payment(p.id)).status, 'partially_refunded');
      await reconcile();
      assert.equal((await t.store.db.selectFrom('refunds').selectAll().where('payment_id', '=', p.id).execute()).length, 1, 'recorded once');
      // A dispute of its own kind (issue 27), lost when recorded: the refund took the money from
      // the payees in the same transaction, so the dispute debits nothing more.
      const disputes = (await api('GET', `/v1/disputes?paymentId=${p.id}`)).json().data;
      assert.equal(disputes.length, 1, 'one dispute, recorded once');
      const [dispute] = disputes;
      assert.match(dispute.id, /^dp_/);
      assert.equal(dispute.kind, 'pix_med');
      assert.equal(dispute.status, 'lost');
      assert.equal(dispute.amount, 1_500);
      assert.equal(dispute.amountDebited, 0);
      assert.equal(dispute.refundId, refund.id);
      assert.equal(dispute.reason, 'MED_FRAUDE');
      assert.deepEqual((await api('GET', `/v1/disputes/${dispute.id}`)).json(), dispute);
      const types = await t.store.db.selectFrom('events').select('type').where('type', 'like', 'dispute.%').where('data', 'like', `%${dispute.id}%`).orderBy('id').execute();
      assert.deepEqual(types.map((e) => e.type), ['dispute.created', 'dispute.closed']);
      const report = await audit(t.store);
      assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
    });
  });
}

// The Efí dialect (paths under /v2, a JSON token request, its webhook check over mTLS) against the
// fake in its `efi` dialect: the same flow, created, paid, approved by the callback.
for (const engine of ENGINES) {
  describe(`live Pix at Efí (${engine})`, () => {
    test('registered, created, paid and approved through the efi dialect', async () => {
      const pki = createPki({ caName: 'Efí test CA' });
      const psp = await startFakePixPsp({ pki, dialect: 'efi' });
      const server = pki.issueServer('pagamentos');
      const t = await startApp(engine, { masterKeys: parseKeyring(newMasterKey('efi')) }, { https: { key: server.key, cert: server.cert, ca: [pki.ca], requestCert: true, rejectUnauthorized: false } });
      try {
        await t.app.listen({ port: 0, host: '127.0.0.1' });
        t.config.publicUrl = `https://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
        const k = await signup(t, 'Loja Efí');
        await t.store.write((tx) => tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', k.accountId).execute());
        const live = (await createKey(t.store, k.accountId, 'secret', true)).key;
        const s = await adminSession(t);
        const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
        const created = await t.app.inject({ method: 'POST', url: '/admin/connector-accounts', headers, payload: {
          name: 'Efí', connector: 'pix_api', dialect: 'efi', method: 'pix', environment: 'production',
          baseUrl: psp.baseUrl.replace(/\/v2$/, ''), pixKey: psp.chaves[0], clientId: psp.client.clientId, clientSecret: psp.client.clientSecret,
          certificatePem: psp.client.cert, privateKeyPem: psp.client.key, caPem: psp.client.ca, reason: 'Efí',
        } });
        assert.equal(created.statusCode, 200, created.body);
        const registered = await t.app.inject({ method: 'POST', url: `/admin/connector-accounts/${created.json().id}/register-webhook`, headers, payload: { reason: 'callbacks' } });
        assert.equal(registered.statusCode, 200, registered.body);
        const res = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(live), payload: { amount: 4_321, method: 'pix' } });
        assert.equal(res.statusCode, 200, res.body);
        const row = await t.store.db.selectFrom('payments').select('provider_txid').where('id', '=', res.json().id).executeTakeFirstOrThrow();
        assert.ok(psp.requests.some((r) => r.path.startsWith('/v2/cob/')), 'the efi paths');
        await psp.pay(row.provider_txid!);
        // Waits for I/O: the worker's calls to the fake PSP over mutual TLS (and the PSP's callbacks to us).
        await eventually(async () => (await t.app.inject({ method: 'GET', url: `/v1/payments/${res.json().id}`, headers: auth(live) })).json().status === 'approved', 'approved');
        assert.deepEqual(psp.contractViolations, []);
      } finally {
        t.app.server.closeAllConnections();
        await t.teardown();
        await psp.close();
        pki.dispose();
      }
    });
  });
}
