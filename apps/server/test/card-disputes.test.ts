import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { ENGINES, startApp, signup, auth, adminSession, eventually, webhookReceiver, type TestApp, type Keys } from './helpers.js';
import { ADYEN_TEST_CARDS, WEBHOOKS_CONTRACT, fakeEncrypt, startFakeAdyen, type FakeAdyen } from './fakes/fake-adyen.js';
import { createKey } from '../src/modules/accounts/service.js';
import { newMasterKey, parseKeyring } from '../src/providers/secrets/envelope.js';
import { openAccount } from '../src/providers/accounts.js';
import type { CardSecrets, CardSettings } from '../src/providers/connector.js';
import { syncCardPayment } from '../src/modules/payments/live-card.js';
import { DISPUTE_EVENT_CODES, disputeStage } from '../src/providers/adyen/transformers.js';
import { audit } from '../src/modules/audit.js';
import { newId } from '../src/domain/ids.js';

// Disputes on live cards (issue 27), against the fake Adyen: its dispute notifications, signed
// like the others and checked against Adyen's Webhooks-v1 contract, become a dispute (dp_) that
// moves only forward; a lost one debits the merchant and the split's recipient in proportion to
// their shares, in the same transaction, and a reversed one gives exactly that back. The books
// (the audit, the balance) add up after every step. Through our HTTP API on both engines.

test('every dispute notification we read is in the trimmed Webhooks contract, and maps as hyperswitch maps it', () => {
  const doc = JSON.parse(readFileSync(WEBHOOKS_CONTRACT, 'utf8')) as { webhooks: Record<string, unknown> };
  for (const code of DISPUTE_EVENT_CODES) assert.ok(doc.webhooks[`/${code}`], `${code} is in webhooks-v1.trimmed.json`);
  const map = (code: string, disputeStatus?: string) => disputeStage(code, disputeStatus ? { disputeStatus } : {})?.status;
  assert.equal(map('REQUEST_FOR_INFORMATION'), 'needs_response');
  assert.equal(map('NOTIFICATION_OF_CHARGEBACK'), 'needs_response');
  assert.equal(map('CHARGEBACK'), 'lost', 'no disputeStatus (Brazil): lost');
  assert.equal(map('CHARGEBACK', 'Lost'), 'lost');
  assert.equal(map('CHARGEBACK', 'Accepted'), 'lost');
  assert.equal(map('CHARGEBACK', 'Won'), 'won');
  assert.equal(map('CHARGEBACK', 'Undefended'), 'needs_response');
  assert.equal(map('CHARGEBACK', 'Pending'), 'under_review');
  assert.equal(map('CHARGEBACK_REVERSED'), 'won');
  assert.equal(map('CHARGEBACK_REVERSED', 'Pending'), 'under_review');
  assert.equal(map('SECOND_CHARGEBACK'), 'lost');
  assert.equal(disputeStage('REFUND', {}), null);
  const ranks = DISPUTE_EVENT_CODES.map((c) => disputeStage(c, {})!.rank);
  assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b), 'stages ranked in the order a dispute goes through them');
  assert.equal(disputeStage('CHARGEBACK', { defensePeriodEndsAt: '2026-12-19T12:00:00+02:00', chargebackReasonCode: '10.4' })?.respondBy, '2026-12-19T10:00:00.000Z');
  assert.equal(disputeStage('CHARGEBACK', { defensePeriodEndsAt: 'soon' })?.respondBy, null, 'a deadline that is no date is none');
});

interface Receivable { id: string; amount: number; payee: { type: string; id: string }; disputeId: string | null; refundId: string | null }
interface Dispute { id: string; status: string; kind: string; amount: number; amountDebited: number; paymentId: string; respondBy: string | null; reasonCode: string | null; closedAt: string | null; refundId: string | null }

for (const engine of ENGINES) {
  describe(`card disputes on Adyen (${engine})`, () => {
    let adyen: FakeAdyen;
    let t: TestApp;
    let k: Keys;
    let live: string;
    let livePk: string;
    let recipientId: string;
    let hooks: Awaited<ReturnType<typeof webhookReceiver>>;
    let endpointId: string;

    const api = (method: 'GET' | 'POST', url: string, body?: object) =>
      t.app.inject({ method, url, headers: auth(live), ...(body ? { payload: body } : {}) });
    const ok = async (method: 'GET' | 'POST', url: string, body?: object) => {
      const res = await api(method, url, body);
      assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
      return res.json();
    };
    const tokenOf = async (number: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/tokens', headers: auth(livePk), payload: { encryptedCard: { encryptedCardNumber: fakeEncrypt(number), encryptedExpiryMonth: fakeEncrypt('03'), encryptedExpiryYear: fakeEncrypt('2030'), encryptedSecurityCode: fakeEncrypt('737'), brand: 'visa', last4: number.slice(-4), expMonth: 3, expYear: 2030 } } });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().id as string;
    };
    // An approved live card sale; its pspReference at the fake.
    const sale = async (amount: number) => {
      const p = await ok('POST', '/v1/payments', { amount, method: 'credit_card', cardToken: await tokenOf(ADYEN_TEST_CARDS.approved) });
      // Waits for I/O: the worker's calls to the fake Adyen (and its notifications to us).
      await eventually(async () => (await ok('GET', `/v1/payments/${p.id}`)).status === 'approved', 'approved');
      await adyen.idle();
      const row = await t.store.db.selectFrom('payments').select('provider_charge_id').where('id', '=', p.id).executeTakeFirstOrThrow();
      return { id: p.id as string, psp: row.provider_charge_id! };
    };
    const disputesOf = async (paymentId: string) => (await ok('GET', `/v1/disputes?paymentId=${paymentId}`)).data as Dispute[];
    const disputeReceivables = async (paymentId: string) => ((await ok('GET', `/v1/receivables?paymentId=${paymentId}&limit=100`)).data as Receivable[]).filter((r) => r.disputeId !== null);
    const byPayee = (rows: Receivable[]) => {
      const out: Record<string, number> = {};
      for (const r of rows) out[r.payee.type] = (out[r.payee.type] ?? 0) + r.amount;
      return out;
    };
    // Waits for I/O: the fake Adyen's notifications to us over HTTP, and the card.sync jobs they
    // queue (run by the worker): none left.
    const synced = () => eventually(async () => {
      const left = await t.store.db.selectFrom('jobs').select('id').where('type', '=', 'card.sync').executeTakeFirst();
      return left === undefined;
    }, 'card syncs done');
    const auditOk = async (what: string) => {
      const report = await audit(t.store);
      assert.ok(report.ok, `${what}: ${JSON.stringify(report.checks.filter((c) => c.violations > 0))}`);
    };
    const balance = async () => {
      const b = await ok('GET', '/v1/balance');
      const r = (b.recipients as Array<{ recipientId: string; pending: number; available: number }>).find((x) => x.recipientId === recipientId);
      return { merchant: b.merchant.pending + b.merchant.available, recipient: (r?.pending ?? 0) + (r?.available ?? 0) };
    };

    before(async () => {
      adyen = await startFakeAdyen();
      t = await startApp(engine, { masterKeys: parseKeyring(newMasterKey('run')) });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      t.config.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      k = await signup(t, 'Loja Disputas');
      await t.store.write((tx) => tx.updateTable('accounts').set({ live_enabled: 1 }).where('id', '=', k.accountId).execute());
      live = (await createKey(t.store, k.accountId, 'secret', true)).key;
      livePk = (await createKey(t.store, k.accountId, 'publishable', true)).key;
      const admin = await adminSession(t);
      const created = await t.app.inject({ method: 'POST', url: '/admin/connector-accounts/adyen', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf }, payload: {
        name: 'Adyen produção', connector: 'adyen', method: 'card', environment: 'production', baseUrl: adyen.baseUrl,
        merchantAccount: adyen.merchantAccount, clientKey: adyen.clientKey.replace(/^test_/, 'live_'), apiKey: adyen.apiKey, hmacKey: adyen.hmacKey, timeoutMs: 1500, reason: 'cards with disputes',
      } });
      assert.equal(created.statusCode, 200, created.body);
      const row = await t.store.db.selectFrom('connector_accounts').selectAll().where('id', '=', created.json().id).executeTakeFirstOrThrow();
      const opened = openAccount<CardSettings, CardSecrets>(t.config.masterKeys, row);
      adyen.setWebhook(`${t.config.publicUrl}/v1/provider-callbacks/${opened.secrets.webhookToken}/adyen`);
      // A recipient with 30% of every sale (the split rule is admin-only; here it is a row).
      recipientId = (await ok('POST', '/v1/recipients', { name: 'Parceiro LTDA', document: '11.222.333/0001-81', bankAccount: { bankCode: '341', agency: '1234', account: '12345-6', accountType: 'checking' } })).id;
      const now = new Date().toISOString();
      await t.store.write((tx) => tx.insertInto('split_rules').values({
        id: newId('splitRule', Date.now()), account_id: k.accountId, livemode: 1, priority: 1, conditions: null, splits: JSON.stringify([{ recipientId, percentage: 30 }]), active: 1, description: null, created_at: now, updated_at: now,
      }).execute());
      // A live endpoint must be public: made with a public address, then pointed at a loopback
      // receiver that live deliveries refuse to reach. What is asserted is the fan-out: each
      // dispute event gets its delivery to the endpoint subscribed to it, as every event does.
      hooks = await webhookReceiver();
      endpointId = (await ok('POST', '/v1/webhook-endpoints', { url: 'https://8.8.8.8/hooks/disputes', events: ['dispute.created', 'dispute.updated', 'dispute.closed'] })).id;
      await t.store.write((tx) => tx.updateTable('webhook_endpoints').set({ url: hooks.url }).where('id', '=', endpointId).execute());
    });
    after(async () => {
      hooks.close();
      await adyen.close();
      t.app.server.closeAllConnections();
      await t.teardown();
      assert.deepEqual(adyen.contractViolations, [], 'every notification of the fake kept Adyen\'s contract');
    });

    test('a chargeback announced, lost, then reversed: the payees are debited in proportion, then given back exactly; refunds wait; webhooks say so', async () => {
      const p = await sale(10_000);
      const before = await balance();
      // R$ 100,00 by card: fee 438, net 9562; the recipient's 30% is 2868, the merchant's 6694.
      const shares = byPayee(((await ok('GET', `/v1/receivables?paymentId=${p.id}`)).data as Receivable[]));
      assert.deepEqual(shares, { merchant: 6694, recipient: 2868 });

      const disputeRef = await adyen.dispute(p.psp, 'NOTIFICATION_OF_CHARGEBACK', { additionalData: { chargebackReasonCode: '10.4', defensePeriodEndsAt: '2026-12-19T12:00:00+02:00', disputeStatus: 'Undefended', defendable: 'true' } });
      await synced();
      let [d] = await disputesOf(p.id);
      assert.ok(d, 'the dispute exists');
      assert.match(d.id, /^dp_/);
      assert.equal(d.kind, 'card_chargeback');
      assert.equal(d.status, 'needs_response');
      assert.equal(d.amount, 10_000);
      assert.equal(d.amountDebited, 0);
      assert.equal(d.reasonCode, '10.4');
      assert.equal(d.respondBy, '2026-12-19T10:00:00.000Z');
      assert.equal(d.closedAt, null);
      assert.deepEqual(await disputeReceivables(p.id), [], 'announced: no money moves yet');
      assert.deepEqual(await ok('GET', `/v1/disputes/${d.id}`), d);

      const refused = await api('POST', '/v1/refunds', { paymentId: p.id, amount: 100 });
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(refused.json().error.code, 'INVALID_STATE');

      // Adyen sends no disputeStatus for payments processed in Brazil: the chargeback is lost.
      await adyen.dispute(p.psp, 'CHARGEBACK');
      await synced();
      [d] = await disputesOf(p.id);
      assert.equal(d.status, 'lost');
      assert.equal(d.amountDebited, 10_000);
      assert.ok(d.closedAt);
      const debit = await disputeReceivables(p.id);
      assert.ok(debit.every((r) => r.disputeId === d.id && r.amount < 0 && r.refundId === null));
      // Recipient floor(2868 × 10000 / 9562) = 2999, the merchant the remainder: 7001.
      assert.deepEqual(byPayee(debit), { merchant: -7001, recipient: -2999 });
      assert.deepEqual(await balance(), { merchant: before.merchant - 7001, recipient: before.recipient - 2999 });
      await auditOk('after the loss');

      await adyen.dispute(p.psp, 'CHARGEBACK_REVERSED');
      await synced();
      [d] = await disputesOf(p.id);
      assert.equal(d.status, 'won');
      assert.equal(d.amountDebited, 0);
      const all = await disputeReceivables(p.id);
      assert.equal(all.length, 4, 'a debit and a give-back for each payee');
      assert.deepEqual(byPayee(all), { merchant: 0, recipient: 0 });
      assert.deepEqual(await balance(), before);
      await auditOk('after the reversal');
      assert.equal((await disputesOf(p.id)).length, 1, 'one dispute: every stage carried the same dispute pspReference');
      assert.equal(typeof disputeRef, 'string');

      // Won: the payment can be refunded again, and the refund's books hold.
      const refund = await api('POST', '/v1/refunds', { paymentId: p.id, amount: 1_000 });
      assert.equal(refund.statusCode, 200, refund.body);
      await auditOk('after a refund of the won payment');

      const delivered = await t.store.db.selectFrom('webhook_deliveries').innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
        .select(['events.type', 'events.data']).where('webhook_deliveries.endpoint_id', '=', endpointId).orderBy('events.id').execute();
      const mine = delivered.map((e) => ({ type: e.type, object: (JSON.parse(e.data) as { object: Dispute }).object })).filter((e) => e.object.id === d.id);
      assert.deepEqual(mine.map((e) => `${e.type}:${e.object.status}`), ['dispute.created:needs_response', 'dispute.closed:lost', 'dispute.closed:won']);
      assert.equal(hooks.hits.length, 0, 'a live delivery never reaches a loopback address');
      const events = (await ok('GET', '/v1/events?type=dispute.closed&limit=100')).data as Array<{ data: { object: Dispute } }>;
      assert.equal(events.filter((e) => e.data.object.id === d.id).length, 2);
    });

    test('a duplicated chargeback notification debits once, however often it is applied', async () => {
      const p = await sale(5_000);
      await adyen.dispute(p.psp, 'CHARGEBACK');
      await synced();
      const stored = await t.store.db.selectFrom('card_notifications').select('id').where('payment_id', '=', p.id).execute();
      await adyen.resend();
      await adyen.resend();
      await synced();
      assert.equal((await t.store.db.selectFrom('card_notifications').select('id').where('payment_id', '=', p.id).execute()).length, stored.length, 'stored once');
      // The sync applies every stored item again: nothing changes.
      await syncCardPayment(t.paymentDeps, p.id);
      await syncCardPayment(t.paymentDeps, p.id);
      const [d, ...more] = await disputesOf(p.id);
      assert.equal(more.length, 0);
      assert.equal(d.status, 'lost');
      assert.equal(d.amountDebited, 5_000);
      const debit = await disputeReceivables(p.id);
      assert.equal(debit.length, 2, 'one debit per payee');
      assert.equal(debit.reduce((s, r) => s + r.amount, 0), -5_000);
      await auditOk('after the duplicates');
    });

    test('out of order: a reversal that arrives before its chargeback never moves the dispute backwards nor debits', async () => {
      const p = await sale(7_777);
      adyen.holdNotifications();
      await adyen.dispute(p.psp, 'NOTIFICATION_OF_CHARGEBACK');
      await adyen.dispute(p.psp, 'CHARGEBACK');
      await adyen.dispute(p.psp, 'CHARGEBACK_REVERSED');
      // Delivered last first.
      await adyen.releaseNotifications({ order: 'reverse' });
      await synced();
      let [d] = await disputesOf(p.id);
      assert.equal(d.status, 'won');
      assert.equal(d.amountDebited, 0);
      assert.equal((await disputeReceivables(p.id)).reduce((s, r) => s + r.amount, 0), 0, 'whatever was applied, nothing stays debited');
      const statuses = ((await ok('GET', '/v1/events?limit=100')).data as Array<{ type: string; data: { object: Dispute } }>)
        .filter((e) => e.type.startsWith('dispute.') && e.data.object.id === d.id).reverse().map((e) => e.data.object.status);
      assert.equal(statuses.at(-1), 'won', 'the last word is the reversal');
      await auditOk('after the reordered notifications');

      // A second chargeback (pre-arbitration lost) decides it again: lost, debited once more.
      await adyen.dispute(p.psp, 'SECOND_CHARGEBACK');
      await synced();
      [d] = await disputesOf(p.id);
      assert.equal(d.status, 'lost');
      assert.equal(d.amountDebited, 7_777);
      assert.equal((await disputeReceivables(p.id)).reduce((s, r) => s + r.amount, 0), -7_777);
      // The reversal again, late: stored once already, it moves nothing.
      const late = adyen.notifications.find((n) => n.eventCode === 'CHARGEBACK_REVERSED' && JSON.stringify(n.body).includes(p.psp))!;
      await adyen.resend(late);
      await synced();
      await syncCardPayment(t.paymentDeps, p.id);
      assert.equal((await disputesOf(p.id))[0].status, 'lost');
      await auditOk('after the second chargeback');
    });

    test('lists filter by payment, status and kind, with cursors; an unknown dispute is a 404; bad filters are refused', async () => {
      const lost = await ok('GET', '/v1/disputes?status=lost&kind=card_chargeback&limit=1');
      assert.equal(lost.data.length, 1);
      assert.equal(lost.hasMore, true);
      const next = await ok('GET', `/v1/disputes?status=lost&startingAfter=${lost.data[0].id}`);
      assert.ok(next.data.every((x: Dispute) => x.status === 'lost' && x.id < lost.data[0].id));
      assert.equal((await ok('GET', '/v1/disputes?kind=pix_med')).data.length, 0);
      const missing = await api('GET', '/v1/disputes/dp_01jc6v8x2a9m3yq0d7b4e5f6g8');
      assert.equal(missing.statusCode, 404);
      const bad = await api('GET', '/v1/disputes?status=open');
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.param, 'status');
      // The back office's list: every account's, with the merchant's name and the deadline.
      const admin = await adminSession(t, 'viewer');
      const back = await t.app.inject({ method: 'GET', url: `/admin/disputes?accountId=${k.accountId}&livemode=true&limit=100`, headers: { cookie: admin.cookie } });
      assert.equal(back.statusCode, 200, back.body);
      const rows = back.json().data as Array<Dispute & { accountId: string; accountName: string }>;
      assert.deepEqual(rows.map((r) => r.id), (await ok('GET', '/v1/disputes?limit=100')).data.map((x: Dispute) => x.id));
      assert.ok(rows.every((r) => r.accountName === 'Loja Disputas' && r.accountId === k.accountId));
      assert.ok(rows.some((r) => r.respondBy === '2026-12-19T10:00:00.000Z'));
      // And a payment's detail lists its disputes.
      const withOne = rows[0];
      const detail = await t.app.inject({ method: 'GET', url: `/admin/payments/${withOne.paymentId}`, headers: { cookie: admin.cookie } });
      assert.deepEqual(detail.json().disputes.map((x: Dispute) => x.id), [withOne.id]);
      // Sandbox keys never see live disputes.
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/disputes', headers: auth(k.secretKey) })).json().data.length, 0);
    });
  });
}
