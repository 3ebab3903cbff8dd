// The same Idempotency-Key and body at two API processes at the same moment (issue 23). The
// process that loses must answer what the contract says: the winner's stored answer, replayed
// (or 409 IDEMPOTENCY_KEY_IN_USE while the winner is still in flight), never its own business
// outcome. Before, the loser's refusal (409 INVALID_STATE: the winner had refunded the payment,
// or paid the session) went to the error path, whose key insert lost on the primary key, was
// swallowed, and the loser sent its own 409: 23 of 25 checkout card pays, 12 of 12 full refunds.
//
// Two app instances on one database: each with its own connection pool, its own in-flight keys
// and its own memory, sharing only the store, which is all two processes share. On SQLite the
// writes of the two are serialized by the database file's lock; on PostgreSQL they really race.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ENGINES, startApp, signup, auth, adminSession, type TestApp, type Keys } from './helpers.js';
import { audit } from '../src/modules/audit.js';

const ROUNDS = 15;

interface Answer { status: number; body: Record<string, unknown>; replayed: boolean }

for (const engine of ENGINES) {
  describe(`one Idempotency-Key at two API processes at once (${engine})`, () => {
    let a: TestApp;
    let b: TestApp;
    let k: Keys;

    before(async () => {
      a = await startApp(engine);
      // The second process: same database, its own everything else, no worker of its own.
      b = await startApp(engine, {}, { db: a.db, worker: false });
      k = await signup(a);
    });
    after(async () => {
      await b.teardown();
      await a.teardown();
    });

    const send = async (t: TestApp, url: string, headers: Record<string, string>, payload: object): Promise<Answer> => {
      const res = await t.app.inject({ method: 'POST', url, headers, payload });
      return { status: res.statusCode, body: res.json(), replayed: res.headers['idempotent-replayed'] === 'true' };
    };
    // The same request at both processes at once: both answers must be the key's one answer
    // (the same status and bytes, one of them replayed), or the loser's 409 IN_USE.
    const both = async (url: string, headers: Record<string, string>, payload: object) => {
      const [x, y] = await Promise.all([send(a, url, headers, payload), send(b, url, headers, payload)]);
      const inUse = [x, y].filter((r) => r.status === 409 && r.body.error && (r.body.error as { code: string }).code === 'IDEMPOTENCY_KEY_IN_USE');
      if (inUse.length === 1) return [x, y].find((r) => !inUse.includes(r)) as Answer;
      assert.equal(inUse.length, 0, 'at most one of the two is told the key is in use');
      assert.deepEqual([x.status, x.body], [y.status, y.body], `both processes answer the key's one answer: ${JSON.stringify([x, y])}`);
      assert.ok(x.replayed !== y.replayed, 'one of them is the replay');
      return x;
    };
    const paidPix = async (amount: number) => {
      const p = await send(a, '/v1/payments', auth(k.secretKey), { amount, method: 'pix' });
      const paid = await send(a, `/v1/sandbox/payments/${String(p.body.id)}/pay`, auth(k.secretKey), {});
      assert.equal(paid.status, 200);
      return String(p.body.id);
    };

    test(`payments: ${ROUNDS} keyed creates, each sent to both: one payment per key`, async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const key = randomUUID();
        const answer = await both('/v1/payments', auth(k.secretKey, { 'idempotency-key': key }), { amountInCents: 1000 + i, method: 'credit_card', cardToken: 'tok_visa' });
        assert.equal(answer.status, 200);
        const made = await a.store.db.selectFrom('payments').select('id').where('account_id', '=', k.accountId).where('amount', '=', 1000 + i).execute();
        assert.equal(made.length, 1, 'the key made one payment');
      }
    });

    test(`refunds: ${ROUNDS} full refunds, each sent to both: one refund, and the loser replays it instead of answering INVALID_STATE`, async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const paymentId = await paidPix(2000 + i);
        const answer = await both('/v1/refunds', auth(k.secretKey, { 'idempotency-key': randomUUID() }), { paymentId });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        const refunds = await a.store.db.selectFrom('refunds').select('id').where('payment_id', '=', paymentId).execute();
        assert.equal(refunds.length, 1);
      }
    });

    test(`checkout pay: ${ROUNDS} card pays of a session, each sent to both: one payment per session`, async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const session = await send(a, '/v1/checkout/sessions', auth(k.secretKey), { amount: 3000 + i });
        assert.equal(session.status, 200);
        const secret = String(session.body.clientSecret);
        const token = await send(a, '/v1/tokens', auth(secret), { card: { number: '4242424242424242', expMonth: 12, expYear: 2099, cvc: '123' } });
        const answer = await both(`/v1/checkout/sessions/${String(session.body.id)}/client/pay`, { authorization: `Bearer ${secret}`, 'idempotency-key': randomUUID() }, { method: 'credit_card', cardToken: String(token.body.id) });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        const payments = await a.store.db.selectFrom('payments').select('id').where('checkout_session_id', '=', String(session.body.id)).execute();
        assert.equal(payments.length, 1);
      }
    });

    test(`settlement runs: ${ROUNDS} runs, each sent to both: one run per key`, async () => {
      const admin = await adminSession(a);
      for (let i = 0; i < ROUNDS; i++) {
        const before = await a.store.db.selectFrom('settlement_runs').select('id').execute();
        const answer = await both('/admin/settlement-runs', { cookie: admin.cookie, 'x-csrf-token': admin.csrf, 'idempotency-key': randomUUID() }, { reason: `round ${i}` });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        const after = await a.store.db.selectFrom('settlement_runs').select('id').execute();
        assert.equal(after.length, before.length + 1, 'the key started one run');
      }
      const report = await audit(a.store);
      assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
    });
  });
}
