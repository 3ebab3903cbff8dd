import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parsePixBrCode } from '../src/domain/pix.js';
import { ENGINES, startManualApp, signup, auth, type ManualApp, type Keys } from './helpers.js';
import { SandboxProvider } from '../src/providers/sandbox.js';
import { cardOutcome } from '../src/modules/payments/service.js';
import type { PaymentProvider } from '../src/providers/port.js';

for (const engine of ENGINES) {
  describe(`payments (${engine})`, () => {
    // A ManualClock: card confirmations run on t.runDue() (retries on t.advance()), not on a poll.
    let t: ManualApp;
    let k: Keys;
    before(async () => {
      t = await startManualApp(engine);
      k = await signup(t);
    });
    after(() => t.teardown());

    const create = (body: unknown, headers: Record<string, string> = {}, key = k.secretKey) =>
      t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(key, headers), payload: body as object });
    const get = (id: string, key = k.secretKey) => t.app.inject({ method: 'GET', url: `/v1/payments/${id}`, headers: auth(key) });
    const statusOf = async (id: string) => (await get(id)).json().status as string;

    test('shape A pix payment: pending, with a real BR Code and its QR code', async () => {
      const res = await create({ amount: 1050, currency: 'BRL', method: 'pix' });
      assert.equal(res.statusCode, 200);
      const p = res.json();
      assert.match(p.id, /^pay_[0-9a-z]{26}$/);
      assert.equal(p.status, 'pending');
      assert.equal(p.amount, 1050);
      assert.equal(p.currency, 'BRL');
      assert.equal(p.method, 'pix');
      assert.equal(p.livemode, false);
      const code = parsePixBrCode(p.pix.copyPaste);
      assert.equal(code.amountCents, 1050);
      assert.equal(code.txid, p.id.slice(4).slice(-25).toUpperCase());
      assert.equal(code.pixKey, t.config.pixKey);
      assert.match(p.pix.qrCodeSvg, /^<svg[^>]*viewBox/);
      const expiresInMs = Date.parse(p.pix.expiresAt) - Date.parse(p.createdAt);
      assert.equal(expiresInMs, 3600_000);
      const fetched = await get(p.id);
      assert.equal(fetched.statusCode, 200);
      assert.deepEqual(fetched.json(), p);
    });

    test('reads that share a query (PostgreSQL: one per turn of the event loop): each caller gets its own payment; another account\'s and made-up ids are 404 in the same turn', async () => {
      const other = await signup(t, 'Other merchant');
      const mine = await Promise.all(Array.from({ length: 12 }, (_, i) => create({ amount: 1000 + i, currency: 'BRL', method: 'pix' })));
      const theirs = await Promise.all(Array.from({ length: 4 }, (_, i) => create({ amount: 2000 + i, currency: 'BRL', method: 'pix' }, {}, other.secretKey)));
      const mineIds = mine.map((r) => r.json().id as string);
      const theirIds = theirs.map((r) => r.json().id as string);
      const made = 'pay_' + '0'.repeat(26);
      // All sent at once, so on PostgreSQL they land in the same turn and share queries.
      const reads = await Promise.all([
        ...mineIds.map((id) => get(id)),
        ...theirIds.map((id) => get(id)), // mine key, their payments
        ...theirIds.map((id) => get(id, other.secretKey)),
        get(made),
        get(mineIds[0]), // the same id twice in one turn
      ]);
      mineIds.forEach((id, i) => { assert.equal(reads[i].statusCode, 200); assert.equal(reads[i].json().id, id); assert.equal(reads[i].json().amount, 1000 + i); });
      for (let i = 0; i < theirIds.length; i++) {
        const cross = reads[mineIds.length + i];
        assert.equal(cross.statusCode, 404);
        assert.equal(cross.json().error.code, 'NOT_FOUND');
        const own = reads[mineIds.length + theirIds.length + i];
        assert.equal(own.statusCode, 200);
        assert.equal(own.json().amount, 2000 + i);
      }
      assert.equal(reads.at(-2)!.statusCode, 404);
      assert.equal(reads.at(-1)!.json().id, mineIds[0]);
    });

    test('shape B card payment becomes approved a moment later, with fee and net', async () => {
      const res = await create({ amountInCents: 10000, method: 'credit_card', cardToken: 'tok_visa' });
      assert.equal(res.statusCode, 200);
      const p = res.json();
      assert.equal(p.status, 'pending');
      assert.deepEqual(p.card, { brand: 'visa', last4: '4242' });
      await t.runDue();
      const approved = (await get(p.id)).json();
      assert.equal(approved.status, 'approved');
      assert.equal(approved.feeAmount, 438); // 3.99% rounded up + 39 centavos
      assert.equal(approved.netAmount, 9562);
      assert.equal(approved.feeAmount + approved.netAmount, approved.amount);
    });

    test('mastercard approves; declined and insufficient funds decline with a failure', async () => {
      const mc = (await create({ amountInCents: 500, method: 'credit_card', cardToken: 'tok_mastercard' })).json();
      const declined = (await create({ amountInCents: 500, method: 'credit_card', cardToken: 'tok_declined' })).json();
      const poor = (await create({ amountInCents: 500, method: 'credit_card', cardToken: 'tok_insufficient_funds' })).json();
      await t.runDue();
      assert.equal(await statusOf(mc.id), 'approved');
      const d = (await get(declined.id)).json();
      assert.equal(d.status, 'declined');
      assert.deepEqual(d.failure, { code: 'card_declined', message: 'The card was declined.' });
      const i = (await get(poor.id)).json();
      assert.equal(i.status, 'declined');
      assert.equal(i.failure.code, 'insufficient_funds');
      assert.equal(i.feeAmount, null);
    });

    test('provider errors are retried with backoff, then the payment fails without any charge', async () => {
      const p = (await create({ amountInCents: 700, method: 'credit_card', cardToken: 'tok_provider_error' })).json();
      // Each failed attempt is retried after its back-off (base × 2^(attempt-1), ±20%), not before.
      await t.runDue();
      for (let attempt = 1; attempt < t.config.providerMaxAttempts; attempt++) {
        assert.equal(await statusOf(p.id), 'pending', `still pending after attempt ${attempt}`);
        await t.advance(1.2 * t.config.providerRetryBaseMs * 2 ** (attempt - 1));
      }
      const failed = (await get(p.id)).json();
      assert.equal(failed.status, 'failed');
      assert.equal(failed.failure.code, 'provider_unavailable');
      const row = await t.store.db.selectFrom('payments').select('provider_attempts').where('id', '=', p.id).executeTakeFirstOrThrow();
      assert.equal(row.provider_attempts, t.config.providerMaxAttempts);
      const charges = await t.store.db.selectFrom('sandbox_provider_charges').selectAll().where('amount', '=', 700).execute();
      assert.equal(charges.length, 0);
    });

    test('a provider answer lost on the way back is retried with the same key: one charge, approved', async () => {
      const p = (await create({ amountInCents: 777, method: 'credit_card', cardToken: 'tok_provider_timeout' })).json();
      // The lost answer leaves it pending; the retry, after the back-off, finds the charge.
      await t.runDue();
      assert.equal(await statusOf(p.id), 'pending');
      await t.advance(1.2 * t.config.providerRetryBaseMs);
      const approved = (await get(p.id)).json();
      assert.equal(approved.status, 'approved');
      const charges = await t.store.db.selectFrom('sandbox_provider_charges').selectAll().where('amount', '=', 777).execute();
      assert.equal(charges.length, 1, 'exactly one charge at the provider');
      const row = await t.store.db.selectFrom('payments').select(['provider_charge_id', 'provider_attempts']).where('id', '=', approved.id).executeTakeFirstOrThrow();
      assert.equal(row.provider_charge_id, charges[0].charge_id);
      assert.equal(row.provider_attempts, 2);
    });

    test('sandbox payer pays a pix payment; a second payment is INVALID_STATE', async () => {
      const p = (await create({ amount: 2000, method: 'pix' })).json();
      const paid = await t.app.inject({ method: 'POST', url: `/v1/sandbox/payments/${p.id}/pay`, headers: auth(k.secretKey) });
      assert.equal(paid.statusCode, 200);
      assert.equal(paid.json().status, 'approved');
      assert.equal(paid.json().feeAmount, 20); // 0.99% of 2000 rounded up
      const again = await t.app.inject({ method: 'POST', url: `/v1/sandbox/payments/${p.id}/pay`, headers: auth(k.secretKey) });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().error.code, 'INVALID_STATE');
    });

    test('pix expires after its expiry and can then not be paid', async () => {
      // On a ManualClock: the minute passes by moving the clock, not by editing the job's row.
      const m = await startManualApp(engine);
      try {
        const mk = await signup(m);
        const p = (await m.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(mk.secretKey), payload: { amount: 300, method: 'pix', pixExpiresInSeconds: 60 } })).json();
        const status = async () => (await m.app.inject({ method: 'GET', url: `/v1/payments/${p.id}`, headers: auth(mk.secretKey) })).json().status as string;
        await m.advance(59_999);
        assert.equal(await status(), 'pending');
        await m.advance(1);
        assert.equal(await status(), 'expired');
        const pay = await m.app.inject({ method: 'POST', url: `/v1/sandbox/payments/${p.id}/pay`, headers: auth(mk.secretKey) });
        assert.equal(pay.statusCode, 409);
        assert.equal(pay.json().error.code, 'INVALID_STATE');
      } finally {
        await m.teardown();
      }
    });

    test('cancel a pending payment; cancel again is INVALID_STATE', async () => {
      const p = (await create({ amount: 900, method: 'pix' })).json();
      const res = await t.app.inject({ method: 'POST', url: `/v1/payments/${p.id}/cancel`, headers: auth(k.secretKey) });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().status, 'canceled');
      const again = await t.app.inject({ method: 'POST', url: `/v1/payments/${p.id}/cancel`, headers: auth(k.secretKey) });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().error.code, 'INVALID_STATE');
      assert.equal(again.json().error.message, 'A canceled payment cannot become canceled.');
    });

    test('every state change writes its event in the same transaction', async () => {
      const p = (await create({ amount: 1234, method: 'pix' })).json();
      await t.app.inject({ method: 'POST', url: `/v1/sandbox/payments/${p.id}/pay`, headers: auth(k.secretKey) });
      const events = await t.store.db.selectFrom('events').select(['type', 'data']).where('data', 'like', `%${p.id}%`).orderBy('id').execute();
      assert.deepEqual(events.map((e) => e.type), ['payment.created', 'payment.approved', 'receivable.created']);
      assert.equal(JSON.parse(events[1].data).object.status, 'approved');
      const receivable = JSON.parse(events[2].data).object;
      assert.equal(receivable.paymentId, p.id);
      assert.equal(receivable.amount, 1234 - 13); // net of the 0.99% fee, all to the merchant
      assert.deepEqual(receivable.payee, { type: 'merchant', id: k.accountId });
    });

    test('validation: shapes, methods and fields, each naming its param', async () => {
      const cases: Array<[unknown, string]> = [
        [{ amount: 0, method: 'pix' }, 'amount'],
        [{ amount: -5, method: 'pix' }, 'amount'],
        [{ amount: 10.5, method: 'pix' }, 'amount'],
        [{ amount: '1050', method: 'pix' }, 'amount'],
        [{ method: 'pix' }, 'amount'],
        [{ amount: 100, amountInCents: 100, method: 'pix' }, 'amount'],
        [{ amount: 100, method: 'boleto' }, 'method'],
        [{ amount: 100, currency: 'USD', method: 'pix' }, 'currency'],
        [{ amountInCents: 100, method: 'credit_card' }, 'cardToken'],
        [{ amount: 100, method: 'pix', cardToken: 'tok_visa' }, 'cardToken'],
        [{ amountInCents: 100, method: 'credit_card', cardToken: 'tok_nope' }, 'cardToken'],
        [{ amountInCents: 100, method: 'credit_card', cardToken: 'visa' }, 'cardToken'],
        [{ amountInCents: 100, method: 'credit_card', cardToken: 'tok_visa', installments: 13 }, 'installments'],
        [{ amount: 100, method: 'pix', installments: 2 }, 'installments'],
        [{ amount: 100, method: 'pix', metadata: { a: 1 } }, 'metadata.a'],
        [{ amount: 100, method: 'pix', customer: { email: 'not-an-email' } }, 'customer.email'],
        [{ amount: 100, method: 'pix', extra: true }, 'extra'],
        [{ amount: 1_000_000_001, method: 'pix' }, 'amount'],
      ];
      const before = await t.store.db.selectFrom('payments').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      for (const [body, param] of cases) {
        const res = await create(body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        const err = res.json().error;
        assert.equal(err.code, 'VALIDATION_ERROR', JSON.stringify(body));
        assert.equal(err.param, param, JSON.stringify(body));
        assert.equal(err.correlationId, res.headers['x-correlation-id']);
      }
      const afterCount = await t.store.db.selectFrom('payments').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(afterCount.n), Number(before.n), 'refused requests change nothing');
    });

    test('list: newest first, cursors both ways, filters', async () => {
      const other = await signup(t, 'List merchant');
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const body = i % 2 === 0 ? { amount: 100 + i, method: 'pix' } : { amountInCents: 100 + i, method: 'credit_card', cardToken: 'tok_declined' };
        ids.push((await create(body, {}, other.secretKey)).json().id);
      }
      const list = (q: string) => t.app.inject({ method: 'GET', url: `/v1/payments${q}`, headers: auth(other.secretKey) });
      const first = (await list('?limit=3')).json();
      assert.equal(first.object, 'list');
      assert.deepEqual(first.data.map((p: { id: string }) => p.id), [ids[6], ids[5], ids[4]]);
      assert.equal(first.hasMore, true);
      const second = (await list(`?limit=3&startingAfter=${ids[4]}`)).json();
      assert.deepEqual(second.data.map((p: { id: string }) => p.id), [ids[3], ids[2], ids[1]]);
      const third = (await list(`?limit=3&startingAfter=${ids[1]}`)).json();
      assert.deepEqual(third.data.map((p: { id: string }) => p.id), [ids[0]]);
      assert.equal(third.hasMore, false);
      const back = (await list(`?limit=2&endingBefore=${ids[2]}`)).json();
      assert.deepEqual(back.data.map((p: { id: string }) => p.id), [ids[4], ids[3]]);
      assert.equal(back.hasMore, true);
      const pix = (await list('?method=pix')).json();
      assert.deepEqual(pix.data.map((p: { id: string }) => p.id), [ids[6], ids[4], ids[2], ids[0]]);
      await t.runDue();
      assert.equal((await list('?status=declined')).json().data.length, 3);
      const future = (await list(`?createdGte=${encodeURIComponent(new Date(t.clock.nowMs() + 60_000).toISOString())}`)).json();
      assert.deepEqual(future.data, []);
      const past = (await list(`?createdLte=${encodeURIComponent(new Date(t.clock.nowMs() + 60_000).toISOString())}&limit=100`)).json();
      assert.equal(past.data.length, 7);
      for (const bad of ['?limit=0', '?limit=101', '?limit=abc', '?status=paid', '?createdGte=yesterday', '?unknown=1']) {
        const res = await list(bad);
        assert.equal(res.statusCode, 400, bad);
        assert.equal(res.json().error.code, 'VALIDATION_ERROR', bad);
      }
    });

    test('another account, or the other mode, sees 404 for the same id', async () => {
      const p = (await create({ amount: 100, method: 'pix' })).json();
      const other = await signup(t, 'Other merchant');
      const res = await get(p.id, other.secretKey);
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error.code, 'NOT_FOUND');
      const cancel = await t.app.inject({ method: 'POST', url: `/v1/payments/${p.id}/cancel`, headers: auth(other.secretKey) });
      assert.equal(cancel.statusCode, 404);
      const list = (await t.app.inject({ method: 'GET', url: '/v1/payments', headers: auth(other.secretKey) })).json();
      assert.deepEqual(list.data, []);

      // Live mode for the same account: activated, a live key sees nothing of the sandbox.
      const { activateLive, createKey } = await import('../src/modules/accounts/service.js');
      const live = await createKey(t.store, k.accountId, 'secret', true);
      const denied = await get(p.id, live.key);
      assert.equal(denied.statusCode, 403);
      assert.equal(denied.json().error.code, 'PERMISSION_DENIED');
      await activateLive(t.store, k.accountId);
      t.keyCache.clear();
      assert.equal((await get(p.id, live.key)).statusCode, 404);
      // Live mode never reaches the sandbox: without a production Pix connector account the
      // payment is refused (issue 25; test/connector-accounts.test.ts and pix-live tests cover it).
      const livePayment = await create({ amount: 100, method: 'pix' }, {}, live.key);
      assert.equal(livePayment.statusCode, 422);
      const testTokenLive = await create({ amountInCents: 100, method: 'credit_card', cardToken: 'tok_visa' }, {}, live.key);
      assert.equal(testTokenLive.statusCode, 400);
      assert.equal(testTokenLive.json().error.param, 'cardToken');
      const simulator = await t.app.inject({ method: 'POST', url: `/v1/sandbox/payments/${p.id}/pay`, headers: auth(live.key) });
      assert.equal(simulator.statusCode, 403);
    });
  });

  // Confirmations claimed together read their payments once, before the provider calls, and are
  // written together; the transaction does not read them again, it relies on guarded UPDATEs.
  // Here a payment is canceled while the provider is approving it: the batch must fail as a
  // whole, each job then runs alone, the canceled payment stays canceled, its authorization is
  // voided, and only the others are approved, with receivables.
  describe(`batched confirmations against a concurrent cancel (${engine})`, () => {
    test('the canceled payment stays canceled and is voided; the others are approved', async () => {
      const sandbox: { provider?: PaymentProvider } = {};
      const racing = { amountCents: 2002, paymentId: '', key: '', canceled: 0, chargeId: '' };
      const voided: string[] = [];
      let t: ManualApp | undefined;
      const provider: PaymentProvider = {
        name: 'sandbox-with-a-race',
        async authorize(input) {
          const result = await (sandbox.provider as PaymentProvider).authorize(input);
          if (input.amountCents === racing.amountCents && racing.canceled === 0) {
            racing.canceled++;
            racing.chargeId = result.status === 'approved' ? result.chargeId : '';
            // The merchant cancels while the acquirer is answering.
            const res: { statusCode: number; body: string } = await (t as ManualApp).app.inject({ method: 'POST', url: `/v1/payments/${racing.paymentId}/cancel`, headers: auth(racing.key) });
            assert.equal(res.statusCode, 200, res.body);
          }
          return result;
        },
        async void(input) { voided.push(input.chargeId); },
        refund: (input) => (sandbox.provider as PaymentProvider).refund(input),
        payout: (input) => (sandbox.provider as PaymentProvider).payout(input),
      };
      t = await startManualApp(engine, {}, { provider });
      try {
        sandbox.provider = new SandboxProvider(t.store, (token) => cardOutcome(t.store, token));
        const k = await signup(t);
        racing.key = k.secretKey;
        const ids: string[] = [];
        for (const amountInCents of [2001, racing.amountCents, 2003]) {
          const res: { statusCode: number; body: string; json(): { id: string } } = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amountInCents, method: 'credit_card', cardToken: 'tok_visa' } });
          assert.equal(res.statusCode, 200, res.body);
          ids.push(res.json().id);
        }
        racing.paymentId = ids[1];
        // All three jobs are due: the worker claims them in one round and confirms them together.
        await t.runDue();
        const get = async (id: string) => (await t.app.inject({ method: 'GET', url: `/v1/payments/${id}`, headers: auth(k.secretKey) })).json();
        assert.equal((await get(ids[0])).status, 'approved');
        assert.equal((await get(ids[2])).status, 'approved');
        assert.equal(voided.length, 1, 'the void');
        assert.equal(racing.canceled, 1);
        const raced = await get(ids[1]);
        assert.equal(raced.status, 'canceled');
        assert.equal(raced.feeAmount, null);
        assert.match(racing.chargeId, /^ch_/);
        assert.deepEqual(voided, [racing.chargeId]);
        const receivables = async (id: string) => (await t.app.inject({ method: 'GET', url: `/v1/receivables?paymentId=${id}&limit=100`, headers: auth(k.secretKey) })).json().data as unknown[];
        assert.equal((await receivables(ids[1])).length, 0);
        assert.equal((await receivables(ids[0])).length, 1);
        assert.equal((await receivables(ids[2])).length, 1);
        const events = (await t.app.inject({ method: 'GET', url: '/v1/events?limit=100', headers: auth(k.secretKey) })).json().data as Array<{ type: string; data: { object: { id: string } } }>;
        const of = (id: string) => events.filter((e) => e.data.object.id === id).map((e) => e.type).sort();
        assert.deepEqual(of(ids[1]), ['payment.canceled', 'payment.created']);
        assert.deepEqual(of(ids[0]), ['payment.approved', 'payment.created']);
        // The void comes before its job's completion (a failed void leaves the job to try again);
        // once runDue() is back, every confirmation job is done.
        const confirmJobs = async () => Number((await t.store.db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('type', '=', 'payment.confirm').executeTakeFirstOrThrow()).n);
        assert.equal(await confirmJobs(), 0, 'every confirmation job is done');
      } finally {
        await t.teardown();
      }
    });
  });

  // A provider call whose answer is lost (tok_provider_timeout: the sandbox charges, then times
  // out) and a cancel before the call is retried. The retry must not simply see "canceled" and
  // drop the job: it asks the provider again under the same key and voids the charge it finds.
  describe(`a lost provider answer, then a cancel (${engine})`, () => {
    // `retryWithOthers`: the first attempt's retry is held back, then claimed in one round with
    // the other payments' first attempts (a retried job runs alone, not in their batch).
    async function scenario(amounts: number[], timedOutAmount: number, failVoids: number, retryWithOthers = false) {
      const sandbox: { provider?: PaymentProvider } = {};
      const state = { paymentId: '', key: '', canceled: 0, voidCalls: 0 };
      const voided: string[] = [];
      let t: ManualApp | undefined;
      const provider: PaymentProvider = {
        name: 'sandbox-with-a-lost-answer',
        async authorize(input) {
          try {
            return await (sandbox.provider as PaymentProvider).authorize(input);
          } catch (error) {
            if (input.amountCents === timedOutAmount && state.canceled === 0) {
              state.canceled++;
              // The merchant cancels while the answer is lost, before the worker retries.
              const res: { statusCode: number; body: string } = await (t as ManualApp).app.inject({ method: 'POST', url: `/v1/payments/${state.paymentId}/cancel`, headers: auth(state.key) });
              assert.equal(res.statusCode, 200, res.body);
            }
            throw error;
          }
        },
        async void(input) {
          state.voidCalls++;
          if (state.voidCalls <= failVoids) throw new Error('acquirer down for voids');
          voided.push(input.chargeId);
        },
        refund: (input) => (sandbox.provider as PaymentProvider).refund(input),
        payout: (input) => (sandbox.provider as PaymentProvider).payout(input),
      };
      t = await startManualApp(engine, retryWithOthers ? { providerRetryBaseMs: 3_600_000 } : {}, { provider });
      const baseMs = t.config.providerRetryBaseMs;
      try {
        sandbox.provider = new SandboxProvider(t.store, (token) => cardOutcome(t.store, token));
        const k = await signup(t);
        state.key = k.secretKey;
        const ids: string[] = [];
        const create = async (amountInCents: number) => {
          const cardToken = amountInCents === timedOutAmount ? 'tok_provider_timeout' : 'tok_visa';
          const res: { statusCode: number; body: string; json(): { id: string } } = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amountInCents, method: 'credit_card', cardToken } });
          assert.equal(res.statusCode, 200, res.body);
          ids.push(res.json().id);
        };
        if (retryWithOthers) {
          await create(timedOutAmount);
          state.paymentId = ids[0];
          await t.runDue();
          const retry = await t.store.db.selectFrom('jobs').select(['locked_by', 'run_at_ms']).where('type', '=', 'payment.confirm').executeTakeFirstOrThrow();
          assert.equal(state.canceled, 1);
          assert.equal(retry.locked_by, null, 'the first attempt, rescheduled');
          assert.ok(Number(retry.run_at_ms) > t.clock.nowMs(), 'the retry waits for its back-off');
          for (const a of amounts) if (a !== timedOutAmount) await create(a);
          // Past the back-off (base ±20%): the retry and the fresh jobs are due, claimed in one round.
          await t.advance(1.2 * baseMs);
        } else {
          for (const a of amounts) await create(a);
          state.paymentId = ids[amounts.indexOf(timedOutAmount)];
          await t.runDue();
          assert.equal(state.canceled, 1);
          assert.deepEqual(voided, [], 'nothing voided before the retry');
          // The retry, after its back-off (base ±20%), voids.
          await t.advance(1.2 * baseMs);
        }
        // Each failed void leaves the job for its next attempt, after a doubled back-off.
        for (let attempt = 2; attempt <= failVoids + 1; attempt++) {
          assert.deepEqual(voided, [], `a failed void (attempt ${attempt - 1}) voided nothing`);
          await t.advance(1.2 * baseMs * 2 ** (attempt - 1));
        }
        const get = async (id: string) => (await t.app.inject({ method: 'GET', url: `/v1/payments/${id}`, headers: auth(k.secretKey) })).json();
        assert.equal(voided.length, 1, 'the void');
        const jobsLeft = async () => Number((await t.store.db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('type', '=', 'payment.confirm').execute())[0].n);
        assert.equal(await jobsLeft(), 0, 'every confirmation job done');
        const charges = await t.store.db.selectFrom('sandbox_provider_charges').selectAll().where('amount', '=', timedOutAmount).execute();
        assert.equal(charges.length, 1, 'one charge at the provider, made by the call whose answer was lost');
        assert.deepEqual(voided, [charges[0].charge_id]);
        assert.equal(state.voidCalls, failVoids + 1);
        const canceled = await get(state.paymentId);
        assert.equal(canceled.status, 'canceled');
        assert.equal(canceled.feeAmount, null);
        for (const id of ids) if (id !== state.paymentId) assert.equal((await get(id)).status, 'approved');
        const events = (await t.app.inject({ method: 'GET', url: '/v1/events?limit=100', headers: auth(k.secretKey) })).json().data as Array<{ type: string; data: { object: { id: string } } }>;
        assert.deepEqual(events.filter((e) => e.data.object.id === state.paymentId).map((e) => e.type).sort(), ['payment.canceled', 'payment.created']);
      } finally {
        await t.teardown();
      }
    }

    test('alone: the retry finds the payment canceled, asks again under the same key and voids', () => scenario([3003], 3003, 0));
    test('claimed with others: they are approved, the lost one is voided on its retry', () => scenario([3001, 3003, 3005], 3003, 0));
    test('a void that fails keeps the job, and its next attempt voids', () => scenario([3003], 3003, 1));
    test('the retry claimed in one round with fresh jobs runs alone and voids', () => scenario([3001, 3003, 3005], 3003, 0, true));
  });
}
