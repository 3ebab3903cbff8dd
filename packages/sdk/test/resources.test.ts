// Every resource's operations, through the SDK, against a server that really runs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import {
  AuthenticationError, InvalidStateError, NotFoundError, Pagamentos, PagamentosError, PermissionError, ValidationError,
  type Payment, type WebhookEndpointWithSecret,
} from '../src/index.js';
import { ENGINES, eventually, liveKey, merchant, recordingFetch, runSettlement, startReceiver, startServer, type Call, type Running } from './harness.js';

const bank = { bankCode: '341', agency: '1234', account: '12345-6', accountType: 'checking' as const };

for (const engine of ENGINES) {
  describe(`resources (${engine})`, () => {
    let server: Running;
    let client: Pagamentos;
    let accountId: string;
    let publishableKey: string;
    let calls: Call[];
    let receiver: Awaited<ReturnType<typeof startReceiver>>;

    // Waits for I/O: the server under test, a process of its own (its worker and deliveries).
    const approved = async (p: Payment) => eventually(async () => {
      const now = await client.payments.retrieve(p.id);
      return now.status === 'approved' && now;
    }, `payment ${p.id} approved`);

    before(async () => {
      server = await startServer(engine);
      receiver = await startReceiver();
      const recorded = recordingFetch();
      calls = recorded.calls;
      ({ client, accountId, publishableKey } = await merchant(server.baseUrl, { fetch: recorded.fetch }));
    });
    after(async () => {
      await receiver.close();
      await server.close();
    });

    test('the client needs a secret key and tells its mode', () => {
      assert.equal(client.mode, 'test');
      assert.equal(client.livemode, false);
      assert.equal(new Pagamentos('sk_live_abc', { baseUrl: 'https://api.example.com' }).mode, 'live');
      for (const bad of [undefined, '', 'pk_test_abc', 'sk_abc', 42]) {
        assert.throws(() => new Pagamentos(bad as string), (e: unknown) => e instanceof AuthenticationError && e.code === 'API_KEY_REQUIRED');
      }
      assert.throws(() => new Pagamentos('pk_test_abc'), /publishable key/);
      assert.throws(() => new Pagamentos('sk_live_abc'), /explicit baseUrl/);
      assert.throws(() => new Pagamentos('sk_live_abc', { baseUrl: 'http://api.example.com' }), /https/);
      assert.throws(() => new Pagamentos('sk_test_abc', { maxRetries: -1 }), /maxRetries/);
      // The key shows neither in console.log nor in JSON of the client.
      const shown = new Pagamentos('sk_test_secretvalue');
      assert.ok(!inspect(shown, { depth: 10, showHidden: false }).includes('secretvalue'));
      assert.ok(!JSON.stringify(shown).includes('secretvalue'));
    });

    test('payments: create (shape B card, shape B Pix, shape A Pix), retrieve, list, cancel', async () => {
      const card = await client.payments.create({ amountInCents: 2500, method: 'credit_card', cardToken: 'tok_visa', description: 'Pedido 1' });
      assert.match(card.id, /^pay_/);
      assert.equal(card.status, 'pending');
      assert.equal(card.amount, 2500);
      const done = await approved(card);
      assert.equal(done.card?.brand, 'visa');

      const pixB = await client.payments.create({ amountInCents: 1050, method: 'pix' });
      const pixA = await client.payments.create({ amount: 1050, currency: 'BRL', method: 'pix', metadata: { order: 'A-1' } });
      for (const p of [pixB, pixA]) {
        assert.equal(p.method, 'pix');
        assert.equal(p.amount, 1050);
        assert.match(p.pix!.copyPaste, /br\.gov\.bcb\.pix/);
      }
      assert.deepEqual(pixA.metadata, { order: 'A-1' });

      const fetched = await client.payments.retrieve(pixA.id);
      assert.equal(fetched.id, pixA.id);
      const pixes = await client.payments.list({ method: 'pix', limit: 10 });
      assert.deepEqual(pixes.data.map((p) => p.id), [pixA.id, pixB.id]);
      assert.equal(pixes.hasMore, false);

      const canceled = await client.payments.cancel(pixB.id);
      assert.equal(canceled.status, 'canceled');
      const before = calls.length;
      await assert.rejects(client.payments.cancel(pixB.id), (e: unknown) => e instanceof InvalidStateError && e.status === 409 && e.code === 'INVALID_STATE');
      assert.equal(calls.length - before, 1, '409 INVALID_STATE is not retried');
    });

    test('payments: API refusals come back as typed errors with the envelope', async () => {
      const err = await client.payments.create({ amountInCents: -5, method: 'pix' }).catch((e: unknown) => e);
      assert.ok(err instanceof ValidationError && err instanceof PagamentosError);
      assert.equal(err.status, 400);
      assert.equal(err.code, 'VALIDATION_ERROR');
      assert.equal(err.param, 'amountInCents');
      assert.match(err.correlationId!, /^req_/);
      assert.equal(err.correlationId, err.headers!.get('x-correlation-id'));
      assert.match(err.idempotencyKey!, /^[0-9a-f-]{36}$/);
      assert.equal(err.details, undefined, 'one problem: no details');

      // Several problems: each one in `details` (the document's ErrorResponse), typed.
      const several = await client.recipients.create({ name: '', document: '11.222.333/0001-81', bankAccount: { ...bank, bankCode: '34' } }).catch((e: unknown) => e);
      assert.ok(several instanceof ValidationError);
      assert.deepEqual([...new Set(several.details?.map((d) => d.param))].sort(), ['bankAccount.bankCode', 'name']);
      assert.ok(several.details?.every((d) => typeof d.issue === 'string' && d.issue.length > 0));

      const missing = await client.payments.retrieve('pay_doesnotexist').catch((e: unknown) => e);
      assert.ok(missing instanceof NotFoundError);
      assert.equal(missing.status, 404);
      // An empty id never turns GET /v1/payments/{id} into the list route.
      assert.throws(() => client.payments.retrieve(''), TypeError);

      const wrongKey = new Pagamentos('sk_test_unknownkey', { baseUrl: server.baseUrl });
      await assert.rejects(wrongKey.balance.retrieve(), (e: unknown) => e instanceof AuthenticationError && e.status === 401 && e.code === 'INVALID_API_KEY');
    });

    test('a key that may not do this gets a PermissionError (403), never retried: live key before live mode, publishable key', async () => {
      const live = await liveKey(server, accountId);
      const recorded = recordingFetch();
      const liveClient = new Pagamentos(live.key, { baseUrl: server.baseUrl, fetch: recorded.fetch });
      assert.equal(liveClient.mode, 'live');
      const err = await liveClient.balance.retrieve().catch((e: unknown) => e);
      assert.ok(err instanceof PermissionError && err instanceof PagamentosError, String(err));
      assert.equal(err.status, 403);
      assert.equal(err.code, 'PERMISSION_DENIED');
      assert.match(err.message, /Live mode is not activated/);
      assert.match(err.correlationId!, /^req_/);
      assert.ok(!err.message.includes(live.key), 'the key is not echoed');
      assert.equal(recorded.calls.length, 1, 'a 403 is not retried');
      // Once an operator activates live mode the same key works: the 403 was about that.
      await live.activate();
      const { response } = await liveClient.balance.retrieve().withResponse();
      assert.equal(response.status, 200);

      // A publishable key where a secret key is needed (sent as an extra header: the constructor
      // itself refuses a pk_ key).
      const pk = await client.balance.retrieve({ headers: { authorization: `Bearer ${publishableKey}` } }).catch((e: unknown) => e);
      assert.ok(pk instanceof PermissionError, String(pk));
      assert.equal(pk.code, 'PERMISSION_DENIED');
      assert.match(pk.message, /Publishable keys/);
    });

    test('withResponse: status, headers, correlationId, idempotent replay, and the key reused', async () => {
      const first = await client.payments.create({ amountInCents: 700, method: 'pix' }, { idempotencyKey: 'order-700' }).withResponse();
      assert.equal(first.response.status, 200);
      assert.match(first.response.correlationId!, /^req_/);
      assert.equal(first.response.headers.get('x-correlation-id'), first.response.correlationId);
      assert.equal(first.response.idempotentReplayed, false);
      assert.equal(first.response.idempotencyKey, 'order-700');
      assert.equal(first.response.attempts, 1);
      const again = await client.payments.create({ amountInCents: 700, method: 'pix' }, { idempotencyKey: 'order-700' }).withResponse();
      assert.equal(again.response.idempotentReplayed, true);
      assert.equal(again.data.id, first.data.id);
      // Extra headers of a call reach the server (a caller-chosen correlation id is kept).
      const tagged = await client.balance.retrieve({ headers: { 'x-correlation-id': 'my-trace-123' } }).withResponse();
      assert.equal(tagged.response.correlationId, 'my-trace-123');
      // An Idempotency-Key given as an extra header, in any case, is the call's one key.
      const byHeader = await client.payments.create({ amountInCents: 700, method: 'pix' }, { headers: { 'IDEMPOTENCY-KEY': 'order-700' } }).withResponse();
      assert.equal(byHeader.response.idempotencyKey, 'order-700');
      assert.equal(byHeader.response.idempotentReplayed, true);
      assert.equal(calls[calls.length - 1].headers['idempotency-key'], 'order-700');
    });

    test('tokens and sandbox: a card token pays; a Pix is paid in the sandbox', async () => {
      const token = await client.tokens.create({ card: { number: '4242 4242 4242 4242', expMonth: 12, expYear: 2040, cvc: '123' } });
      assert.match(token.id, /^tok_/);
      assert.equal(token.card.last4, '4242');
      const paidByToken = await client.payments.create({ amountInCents: 990, method: 'credit_card', cardToken: token.id });
      await approved(paidByToken);

      const pix = await client.payments.create({ amountInCents: 1234, method: 'pix' });
      const paid = await client.sandbox.payPix(pix.id);
      assert.equal(paid.status, 'approved');
    });

    test('refunds: create (partial), retrieve, list', async () => {
      const p = await approved(await client.payments.create({ amountInCents: 5000, method: 'credit_card', cardToken: 'tok_mastercard' }));
      const refund = await client.refunds.create({ paymentId: p.id, amount: 1000, reason: 'requested_by_customer' });
      assert.match(refund.id, /^ref_/);
      assert.equal(refund.amount, 1000);
      assert.equal((await client.refunds.retrieve(refund.id)).paymentId, p.id);
      const list = await client.refunds.list({ paymentId: p.id });
      assert.deepEqual(list.data.map((r) => r.id), [refund.id]);
      await assert.rejects(client.refunds.create({ paymentId: p.id, amount: 999_999 }), (e: unknown) => e instanceof ValidationError && e.status === 422);
    });

    test('recipients: create, retrieve, update, list', async () => {
      const r = await client.recipients.create({ name: 'Loja do Zé LTDA', document: '11.222.333/0001-81', bankAccount: bank });
      assert.match(r.id, /^rcp_/);
      assert.equal(r.document, '11222333000181');
      assert.equal((await client.recipients.retrieve(r.id)).name, 'Loja do Zé LTDA');
      const updated = await client.recipients.update(r.id, { name: 'Loja do Zé Comércio LTDA' });
      assert.equal(updated.name, 'Loja do Zé Comércio LTDA');
      const found = await client.recipients.list({ document: '11222333000181' });
      assert.deepEqual(found.data.map((x) => x.id), [r.id]);
      await assert.rejects(client.recipients.create({ name: 'X', document: '11.222.333/0001-00', bankAccount: bank }), (e: unknown) => e instanceof ValidationError && e.param === 'document');
    });

    test('receivables, settlements, balance: a paid Pix settles', async () => {
      const pix = await client.payments.create({ amountInCents: 10_000, method: 'pix' });
      const paid = await client.sandbox.payPix(pix.id);
      const receivables = await client.receivables.list({ paymentId: pix.id });
      assert.equal(receivables.data.length, 1);
      const rcv = receivables.data[0];
      assert.equal(rcv.amount, paid.netAmount);
      assert.equal((await client.receivables.retrieve(rcv.id)).paymentId, pix.id);
      const before = await client.balance.retrieve();
      assert.equal(before.object, 'balance');
      assert.ok(before.merchant.available >= rcv.amount);

      await runSettlement(server);
      const settled = await client.receivables.retrieve(rcv.id);
      assert.equal(settled.status, 'settled');
      const settlement = await client.settlements.retrieve(settled.settlementId!);
      assert.equal(settlement.payee.type, 'merchant');
      const listed = await client.settlements.list({ payeeType: 'merchant' });
      assert.ok(listed.data.some((s) => s.id === settlement.id));
      const inIt = await client.settlements.listReceivables(settlement.id, { limit: 100 });
      assert.ok(inIt.data.some((x) => x.id === rcv.id));
      assert.equal(inIt.data.reduce((sum, x) => sum + x.amount, 0), settlement.amount);
      const afterRun = await client.balance.retrieve();
      assert.equal(afterRun.merchant.available, 0);
      // The merchant's daily statement (today in São Paulo): its settlement is not paid (held for
      // its payout bank account), so it is not on it; the total is the sum of what is.
      const statement = await client.settlements.dailyStatement();
      assert.equal(statement.object, 'daily_statement');
      assert.equal(statement.timeZone, 'America/Sao_Paulo');
      assert.deepEqual(statement.payee, { type: 'merchant', id: settlement.payee.id });
      assert.equal(settlement.status === 'paid', statement.data.some((x) => x.settlementId === settlement.id));
      assert.equal(statement.total, statement.data.reduce((sum, x) => sum + x.amount, 0));
      assert.equal(statement.count, statement.data.length);
    });

    test('webhook endpoints: create, retrieve, update, list, test, listDeliveries, rotateSecret, del', async () => {
      const created: WebhookEndpointWithSecret = await client.webhookEndpoints.create({ url: receiver.url, events: ['payment.approved'], description: 'orders' });
      assert.match(created.id, /^whe_/);
      assert.match(created.secret, /^whsec_/);
      const fetched = await client.webhookEndpoints.retrieve(created.id);
      assert.equal(fetched.url, receiver.url);
      assert.equal('secret' in fetched, false);
      const updated = await client.webhookEndpoints.update(created.id, { events: ['payment.approved', 'refund.created'] });
      assert.deepEqual(updated.events, ['payment.approved', 'refund.created']);
      assert.ok((await client.webhookEndpoints.list()).data.some((e) => e.id === created.id));

      const delivery = await client.webhookEndpoints.test(created.id);
      assert.match(delivery.id, /^whd_/);
      // Waits for I/O: the server under test, a process of its own (its worker and deliveries).
      const delivered = await eventually(async () => {
        const page = await client.webhookEndpoints.listDeliveries(created.id, { status: 'succeeded' });
        return page.data.find((d) => d.id === delivery.id);
      }, 'test delivery succeeded');
      assert.equal(delivered.lastResponseCode, 200);

      const rotated = await client.webhookEndpoints.rotateSecret(created.id);
      assert.match(rotated.secret, /^whsec_/);
      assert.notEqual(rotated.secret, created.secret);
      const deleted = await client.webhookEndpoints.del(created.id);
      assert.deepEqual(deleted, { id: created.id, object: 'webhook_endpoint', deleted: true, livemode: false });
      await assert.rejects(client.webhookEndpoints.retrieve(created.id), NotFoundError);
    });

    test('events: list (by type), retrieve, redeliver', async () => {
      const endpoint = await client.webhookEndpoints.create({ url: receiver.url, events: ['recipient.created'] });
      const r = await client.recipients.create({ name: 'Entregas Rápidas LTDA', document: '11222333000181', bankAccount: bank });
      const events = await client.events.list({ type: 'recipient.created', limit: 100 });
      const event = events.data.find((e) => (e.data.object as { id: string }).id === r.id);
      assert.ok(event, 'the recipient.created event is listed');
      const fetched = await client.events.retrieve(event.id);
      assert.equal(fetched.type, 'recipient.created');
      const redelivered = await client.events.redeliver(event.id, { endpointId: endpoint.id });
      assert.equal(redelivered.data.length, 1);
      assert.equal(redelivered.data[0].eventId, event.id);
      assert.ok(Array.isArray((await client.events.redeliver(event.id)).data), 'a bare redeliver goes to every matching endpoint');
      await client.webhookEndpoints.del(endpoint.id);
    });

    test('every POST, PATCH and DELETE carried an Idempotency-Key; no GET did', () => {
      assert.ok(calls.length > 30);
      for (const call of calls) {
        if (call.method === 'GET') assert.equal(call.headers['idempotency-key'], undefined, call.url);
        else assert.match(call.headers['idempotency-key'] ?? '', /.+/, `${call.method} ${call.url}`);
      }
      assert.ok(calls.some((c) => c.method === 'PATCH') && calls.some((c) => c.method === 'DELETE'));
    });
  });
}
