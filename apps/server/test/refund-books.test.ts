// Partial refunds never break the books (issue 23), through the API on both engines:
// - the three sales, refunded in many small parts: every refund answered 200, the
//   refunds' net never above the sale's net value, and the refunds that complete the sale return
//   exactly its fee and its net value;
// - a property over random sales (split rules of percentages and fixed amounts), random refund
//   sequences and settlement runs in between: after each refund the parts add up and nothing
//   goes negative; after the refunds that complete a sale everything is returned; the audit
//   passes;
// - migration 0009 repairs a sale the old per-refund rule broke, so it can be refunded to the end.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ENGINES, startApp, signup, auth, eventually, testDatabase, type TestApp, type Keys } from './helpers.js';
import { audit } from '../src/modules/audit.js';
import { runSettlement } from '../src/modules/settlements/service.js';
import { SandboxProvider } from '../src/providers/sandbox.js';
import { newId } from '../src/domain/ids.js';
import { Store } from '../src/store/index.js';
import { createAccount } from '../src/modules/accounts/service.js';

interface Receivable { id: string; amount: number; status: string; payee: { type: string; id: string }; refundId: string | null }
interface Refund { id: string; amount: number; feeRefunded: number; netAmount: number }

const bank = { bankCode: '341', agency: '1234', account: '12345-6', accountType: 'checking' };

for (const engine of ENGINES) {
  describe(`refunds keep the books (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    let recipients: string[];

    const api = async (method: 'GET' | 'POST', url: string, payload?: unknown, key = k.secretKey) => {
      const res = await t.app.inject({ method, url, headers: auth(key), ...(payload === undefined ? {} : { payload: payload as object }) });
      return { status: res.statusCode, body: res.json() };
    };
    const auditOk = async (what: string) => {
      const report = await audit(t.store);
      assert.ok(report.ok, `${what}: ${JSON.stringify(report.checks.filter((c) => c.violations > 0))}`);
    };
    const receivablesOf = async (paymentId: string) => (await api('GET', `/v1/receivables?paymentId=${paymentId}&limit=100`)).body.data as Receivable[];
    const approvedCard = async (amount: number) => {
      const p = await api('POST', '/v1/payments', { amountInCents: amount, method: 'credit_card', cardToken: 'tok_visa' });
      assert.equal(p.status, 200, JSON.stringify(p.body));
      // Waits for the worker's confirmation (I/O on the job queue), not for a clock.
      return eventually(async () => {
        const got = (await api('GET', `/v1/payments/${p.body.id}`)).body;
        return got.status === 'approved' ? got : null;
      }, 'card approval');
    };
    const paidPix = async (amount: number) => {
      const p = await api('POST', '/v1/payments', { amount, method: 'pix' });
      const paid = await api('POST', `/v1/sandbox/payments/${p.body.id}/pay`);
      assert.equal(paid.status, 200, JSON.stringify(paid.body));
      return paid.body;
    };
    // The account's one active rule from now on (none for no splits). Split rules are admin-only
    // and the admin API has its own suite: here the rule is a row.
    const rule = async (splits: unknown[]) => {
      const id = newId('splitRule', Date.now());
      const now = new Date().toISOString();
      await t.store.write((tx) => tx.updateTable('split_rules').set({ active: 0 }).where('account_id', '=', k.accountId).execute());
      if (splits.length === 0) return null;
      await t.store.write((tx) => tx.insertInto('split_rules').values({
        id, account_id: k.accountId, livemode: 0, priority: 1, conditions: null, splits: JSON.stringify(splits), active: 1, description: null, created_at: now, updated_at: now,
      }).execute());
      return id;
    };
    // The books of one sale after a refund: the parts add up, nothing negative.
    const checkSale = async (payment: { id: string; amount: number; feeAmount: number; netAmount: number }, refunds: Refund[]) => {
      const rcv = await receivablesOf(payment.id);
      const held = rcv.reduce((s, r) => s + r.amount, 0);
      const refundedNet = refunds.reduce((s, r) => s + r.netAmount, 0);
      const refundedFee = refunds.reduce((s, r) => s + r.feeRefunded, 0);
      for (const r of refunds) {
        assert.equal(r.feeRefunded + r.netAmount, r.amount, 'a refund is its fee part plus its net part');
        assert.ok(r.feeRefunded >= 0 && r.netAmount >= 0, 'no negative part');
      }
      assert.equal(held, payment.netAmount - refundedNet, 'the receivables hold the net value minus the refunds\' nets');
      assert.ok(refundedNet <= payment.netAmount, 'the refunds never take more than the net value');
      assert.ok(refundedFee <= payment.feeAmount, 'never more fee back than was charged');
      const byPayee = new Map<string, number>();
      for (const r of rcv) {
        if (r.refundId === null) assert.ok(r.amount >= 0, 'a sale receivable is never negative');
        byPayee.set(`${r.payee.type}:${r.payee.id}`, (byPayee.get(`${r.payee.type}:${r.payee.id}`) ?? 0) + r.amount);
      }
      for (const [payee, amount] of byPayee) assert.ok(amount >= 0, `${payee} never owes more than the sale gave it`);
      return { held, refundedNet, refundedFee, byPayee };
    };

    before(async () => {
      t = await startApp(engine);
      k = await signup(t);
      recipients = [];
      for (const [name, document] of [['Loja do Zé LTDA', '11.222.333/0001-81'], ['Plataforma SA', '12.ABC.345/01DE-35'], ['Entregas LTDA', '11222333000181']]) {
        const r = await api('POST', '/v1/recipients', { name, document, bankAccount: bank });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        recipients.push(r.body.id);
      }
    });
    after(async () => {
      await auditOk('at the end of the suite');
      await t.teardown();
    });

    // The figures: with the per-refund floor, 30 × 333 of a 9,999 sale took 9,570 of net
    // from a sale whose net was 9,561; 150 × 13 of 1,999 broke the 146th refund with a 500.
    for (const { amount, parts } of [
      { amount: 9999, parts: [...Array<number>(30).fill(333), 9] },
      { amount: 10000, parts: [...Array<number>(30).fill(333), 10] },
      { amount: 1999, parts: [...Array<number>(150).fill(13), 49] },
    ]) {
      test(`a ${amount} card sale refunded in ${parts.length} parts: every refund answered, the books add up after each, and the last returns exactly the fee and the net`, async () => {
        await rule([]);
        const payment = await approvedCard(amount);
        const refunds: Refund[] = [];
        for (const [i, part] of parts.entries()) {
          const r = await api('POST', '/v1/refunds', { paymentId: payment.id, amount: part });
          assert.equal(r.status, 200, `refund ${i + 1} of ${parts.length}: ${JSON.stringify(r.body)}`);
          refunds.push(r.body);
          await checkSale(payment, refunds);
        }
        const end = await checkSale(payment, refunds);
        assert.equal(end.held, 0, 'a fully refunded sale holds nothing');
        assert.equal(end.refundedFee, payment.feeAmount, 'the whole fee came back');
        assert.equal(end.refundedNet, payment.netAmount, 'the whole net came off the payees');
        assert.equal((await api('GET', `/v1/payments/${payment.id}`)).body.status, 'refunded');
        await auditOk(`after the ${amount} sale`);
      });
    }

    test('property: random sales split by percentages and fixed amounts, random partial refunds and settlement runs between them', async () => {
      const provider = new SandboxProvider(t.store, async () => 'approve');
      const share = fc.oneof(
        fc.record({ recipientId: fc.constantFrom(0, 1, 2), percentage: fc.integer({ min: 1, max: 4000 }).map((bps) => bps / 100) }),
        fc.record({ recipientId: fc.constantFrom(0, 1, 2), amount: fc.integer({ min: 1, max: 3000 }) }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            amount: fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 300, max: 200_000 })),
            splits: fc.array(share, { maxLength: 4 }),
            weights: fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 12 }),
            complete: fc.boolean(),
            settleAfter: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
          }),
          async ({ amount, splits, weights, complete, settleAfter }) => {
            await rule(splits.map((s) => ({ ...s, recipientId: recipients[s.recipientId] })));
            const payment = await paidPix(amount);
            // Refund parts: positive, summing to the amount (or short of it).
            const total = weights.reduce((a, b) => a + b, 0);
            const parts: number[] = [];
            let left = amount;
            for (const w of weights) {
              const p = Math.min(left, Math.max(1, Math.floor((amount * w) / total)));
              if (p > 0) parts.push(p);
              left -= p;
            }
            if (complete && left > 0) parts.push(left);
            const refunds: Refund[] = [];
            for (const [i, part] of parts.entries()) {
              const r = await api('POST', '/v1/refunds', { paymentId: payment.id, amount: part });
              assert.equal(r.status, 200, JSON.stringify(r.body));
              refunds.push(r.body);
              await checkSale(payment, refunds);
              // Some of the sale's receivables settled between refunds: the next refund takes
              // from those payees through negative receivables instead.
              if (settleAfter[i]) await runSettlement({ store: t.store, provider }, { trigger: 'admin' });
            }
            const end = await checkSale(payment, refunds);
            if (refunds.reduce((s, r) => s + r.amount, 0) === amount) {
              assert.equal(end.refundedFee, payment.feeAmount);
              assert.equal(end.held, 0);
              for (const [payee, held] of end.byPayee) assert.equal(held, 0, `${payee} gave back exactly its share`);
            }
            await auditOk('after a refund sequence');
          },
        ),
        { numRuns: 15 },
      );
    });
  });

  describe(`migration 0009 repairs sales the per-refund rule broke (${engine})`, () => {
    test('a 9,999 sale refunded 30 × 333 by the old rule: its rows are repaired, the audit passes, and its last 9 centavos can be refunded', async () => {
      const db = await testDatabase(engine);
      const old = Store.open({ url: db.url });
      await old.migrate('0008_publishable_keys_hashed_only');
      const { account, keys } = await createAccount(old, { name: 'Before 0009' });
      const at = '2026-11-20T12:00:00.000Z';
      // What the old code left: a card sale of 9,999 (fee 438, net 9,561), its receivable cut to
      // 0 by the 30th refund, whose row still recorded the uncapped net (14 of fee, 319 of net
      // each; 30 × 319 = 9,570 > 9,561). And a second sale, refunded once, whose events were
      // purged (its receivables' original amounts cannot be recovered).
      const broken = newId('payment', Date.now());
      const purged = newId('payment', Date.now());
      await old.write(async (tx) => {
        for (const [id, amount, fee, refunded, status] of [[broken, 9999, 438, 9990, 'partially_refunded'], [purged, 10000, 99, 5000, 'partially_refunded']] as const) {
          await tx.insertInto('payments').values({
            id, account_id: account.id, livemode: 0, status, amount, currency: 'BRL', method: id === broken ? 'credit_card' : 'pix', description: null, metadata: null,
            customer: null, installments: null, card_token: null, card_brand: null, card_last4: null, pix_copy_paste: null, expires_at: null, failure_code: null,
            failure_message: null, amount_refunded: refunded, fee_amount: fee, net_amount: amount - fee, provider_charge_id: null, provider_attempts: 1,
            created_at: at, updated_at: at, checkout_session_id: null,
          }).execute();
        }
        const rcv = (id: string, paymentId: string, amount: number, status: string) => ({
          id, account_id: account.id, livemode: 0, payment_id: paymentId, source_id: paymentId, line: 0, payee_type: 'merchant', payee_id: account.id,
          split_rule_id: null, amount, status, available_on: '2026-12-20', settlement_id: null, refund_id: null, created_at: at, updated_at: at,
        });
        const brokenRcv = newId('receivable', Date.now());
        await tx.insertInto('receivables').values([rcv(brokenRcv, broken, 0, 'canceled'), rcv(newId('receivable', Date.now()), purged, 4950, 'pending')] as never).execute();
        await tx.insertInto('events').values({
          id: newId('event', Date.now()), account_id: account.id, livemode: 0, type: 'receivable.created', created_at: at, created_at_ms: Date.parse(at),
          data: JSON.stringify({ object: { id: brokenRcv, object: 'receivable', paymentId: broken, amount: 9561 } }),
        }).execute();
        for (let i = 0; i < 30; i++) {
          await tx.insertInto('refunds').values({
            id: newId('refund', Date.parse(at) + i), account_id: account.id, livemode: 0, payment_id: broken, amount: 333, fee_refunded: 14, net_amount: 319,
            status: 'succeeded', reason: null, metadata: null, provider_refund_id: null, created_at: at, updated_at: at,
          }).execute();
        }
        await tx.insertInto('refunds').values({
          id: newId('refund', Date.now()), account_id: account.id, livemode: 0, payment_id: purged, amount: 5000, fee_refunded: 49, net_amount: 4951,
          status: 'succeeded', reason: null, metadata: null, provider_refund_id: null, created_at: at, updated_at: at,
        }).execute();
      });
      const before = await audit(old);
      assert.ok(!before.ok, 'the old rows break the audit');
      await old.close();

      const t = await startApp(engine, {}, { db });
      try {
        const report = await audit(t.store);
        assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
        const refunds = await t.store.db.selectFrom('refunds').selectAll().where('payment_id', '=', broken).orderBy('id').execute();
        assert.equal(refunds.reduce((s, r) => s + Number(r.net_amount), 0), 9561, 'the refunds now record the net the payees really gave up');
        assert.deepEqual([Number(refunds[29].fee_refunded), Number(refunds[29].net_amount)], [23, 310], 'the 9 over-recorded centavos were fee the platform gave back');
        const original = await t.store.db.selectFrom('receivables').select('original_amount').where('payment_id', '=', broken).executeTakeFirstOrThrow();
        assert.equal(Number(original.original_amount), 9561, 'the original amount came from the receivable.created event');
        const secret = keys.secretKey.key;
        const rest = await t.app.inject({ method: 'POST', url: '/v1/refunds', headers: auth(secret), payload: { paymentId: broken } });
        assert.equal(rest.statusCode, 200, rest.body);
        assert.deepEqual([rest.json().amount, rest.json().feeRefunded, rest.json().netAmount], [9, 9, 0]);
        // The sale without events prorates its net over what each payee holds, fee cumulatively.
        const half = await t.app.inject({ method: 'POST', url: '/v1/refunds', headers: auth(secret), payload: { paymentId: purged } });
        assert.equal(half.statusCode, 200, half.body);
        assert.deepEqual([half.json().feeRefunded, half.json().netAmount], [50, 4950], 'the fee comes back to the cent: 99 in all');
        const after = await audit(t.store);
        assert.ok(after.ok, JSON.stringify(after.checks.filter((c) => c.violations > 0)));
      } finally {
        await t.teardown();
        // An app given its database leaves it (startApp): this test made it, so it drops it.
        await db.drop();
      }
    });
  });
}
