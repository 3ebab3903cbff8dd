import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { ENGINES, startApp, signup, auth, eventually, waitersOn, type TestApp, type Keys } from './helpers.js';
import { audit } from '../src/modules/audit.js';

// Two refunds of one payment committed by two write batches at the same time (PostgreSQL runs
// several batches at once, each on its own connection; SQLite has one writer, so none of this
// can happen there). Each refund reads the payment, computes what is left to refund and what
// each receivable keeps, and writes that back. Reading without a lock, both would compute from
// the same payment: the second would overwrite the first's amount_refunded and receivable cuts,
// and refund more than the payment's amount. The payment is read with FOR UPDATE instead
// (payments repository: readPayment's lockOn), so the second waits for the first and reads
// what it wrote.
//
// The interleaving is made, not hoped for: a connection of the test's own locks the payment row,
// the first refund is sent and waits on that lock; the second is sent once the first is seen
// waiting (a batch of its own, on another connection) and waits too; then the test lets go.

for (const engine of ENGINES.filter((e) => e === 'postgres')) {
  describe(`refunds of one payment in concurrent batches (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    let holder: pg.Client;
    const api = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const res = await t.app.inject({ method, url, headers: auth(k.secretKey), ...(payload ? { payload } : {}) });
      return { status: res.statusCode, body: res.json() };
    };

    before(async () => {
      // No background worker: its jobs for this payment (the first refund's, the approval's) would
      // queue on the held lock too, taking write batches the two refunds need and counting as
      // waiters, so the interleaving below would no longer be the one the test makes.
      t = await startApp(engine, {}, { worker: false });
      k = await signup(t);
      holder = new pg.Client({ connectionString: t.db.url });
      await holder.connect();
    });
    after(async () => {
      await holder.end();
      await t.teardown();
    });

    const waitersOnHolder = () => waitersOn(holder);

    test('the second refund reads what the first wrote: amounts add up, nothing over-refunded', async () => {
      const created = await api('POST', '/v1/payments', { amount: 10_000, method: 'pix' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body.id as string;
      assert.equal((await api('POST', `/v1/sandbox/payments/${id}/pay`)).status, 200);
      // Partially refunded already: the state both refunds start from, and end in, is the same,
      // so the status guard of the UPDATE alone cannot tell them apart.
      assert.equal((await api('POST', '/v1/refunds', { paymentId: id, amount: 1_000 })).status, 200);

      await holder.query('begin');
      await holder.query('select id from payments where id = $1 for update', [id]);
      const first = api('POST', '/v1/refunds', { paymentId: id, amount: 4_000 });
      // Waits for I/O: another PostgreSQL connection queueing behind the held lock.
      // (120 s bounds a hang only: in one CI run, with the generated clients compiling beside the
      // PostgreSQL run, the second refund had not reached its lock within the default 30 s.)
      await eventually(async () => (await waitersOnHolder()) >= 1, 'the first refund waiting on the locked payment', 120_000);
      const second = api('POST', '/v1/refunds', { paymentId: id, amount: 4_500 });
      // Waits for I/O: another PostgreSQL connection queueing behind the held lock.
      await eventually(async () => (await waitersOnHolder()) >= 2, 'the second refund waiting too', 120_000);
      await holder.query('commit');
      const answers = await Promise.all([first, second]);
      for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));

      const payment = (await api('GET', `/v1/payments/${id}`)).body;
      const refunds = (await api('GET', `/v1/refunds?paymentId=${id}&limit=100`)).body.data as Array<{ amount: number }>;
      const refunded = refunds.reduce((s, r) => s + r.amount, 0);
      assert.equal(refunded, 9_500);
      assert.equal(payment.amountRefunded, refunded, "the payment's amountRefunded is the sum of its refunds");
      assert.equal(payment.status, 'partially_refunded');
      // And what the payees keep is the payment's net minus what the refunds took back.
      const report = await audit(t.store);
      assert.ok(report.ok, JSON.stringify(report.checks.filter((c) => c.violations > 0)));
      // 500 centavos are left to refund, no more.
      const over = await api('POST', '/v1/refunds', { paymentId: id, amount: 501 });
      assert.equal(over.status, 422, JSON.stringify(over.body));
    });
  });
}
