// Checkout sessions through the SDK: create, retrieve, list, expire; a session paid on its hosted
// page (the buyer's part done as the page does it) completes with its payment and a typed
// checkout_session.completed webhook.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidStateError, NotFoundError, ValidationError, verifyWebhook, type Pagamentos } from '../src/index.js';
import { ENGINES, eventually, merchant, startReceiver, startServer, type Running } from './harness.js';

for (const engine of ENGINES) {
  describe(`checkout sessions (${engine})`, () => {
    let server: Running;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let client: Pagamentos;
    let secret: string;

    before(async () => {
      server = await startServer(engine);
      receiver = await startReceiver();
      ({ client } = await merchant(server.baseUrl));
      secret = (await client.webhookEndpoints.create({ url: receiver.url, events: ['checkout_session.completed', 'checkout_session.expired'] })).secret;
    });
    after(async () => {
      await receiver.close();
      await server.close();
    });

    const delivered = (type: string, sessionId: string) =>
      // Waits for I/O: the server under test, a process of its own (its worker).
      eventually(async () => {
        for (const d of receiver.deliveries) {
          const event = await verifyWebhook(d.rawBody, d.headers, secret);
          if (event.type === type && (event.data.object as { id: string }).id === sessionId) return event;
        }
        return undefined;
      }, `${type} for ${sessionId}`);

    test('create, retrieve, list, expire', async () => {
      const session = await client.checkoutSessions.create({
        amount: 15_990, methods: ['credit_card', 'pix'], description: 'Pedido 1234', metadata: { order: '1234' },
        successUrl: 'https://loja.example/obrigado', cancelUrl: 'https://loja.example/carrinho', expiresInSeconds: 1800,
      });
      assert.match(session.id, /^cs_/);
      assert.equal(session.object, 'checkout_session');
      assert.equal(session.status, 'open');
      assert.equal(session.amount, 15_990);
      assert.ok(session.url.includes(session.id));
      assert.equal(session.paymentId, null);
      assert.equal(session.livemode, false);

      assert.deepEqual(await client.checkoutSessions.retrieve(session.id), session);
      const open = await client.checkoutSessions.list({ status: 'open', limit: 100 });
      assert.ok(open.data.some((s) => s.id === session.id));

      const expired = await client.checkoutSessions.expire(session.id);
      assert.equal(expired.status, 'expired');
      await assert.rejects(client.checkoutSessions.expire(session.id), InvalidStateError);
      const event = await delivered('checkout_session.expired', session.id);
      if (event.type !== 'checkout_session.expired') return assert.fail(event.type);
      assert.equal(event.data.object.status, 'expired');

      await assert.rejects(client.checkoutSessions.retrieve('cs_nope'), NotFoundError);
      await assert.rejects(client.checkoutSessions.create({ amount: 0 }), (e: unknown) => e instanceof ValidationError && e.param === 'amount');
    });

    test('paid on its page: complete, with its payment and a typed webhook', async () => {
      const session = await client.checkoutSessions.create({ amount: 2500, methods: ['credit_card'] });
      // The buyer's browser, as the hosted page does it: the session loaded with its client
      // secret, a card token made with that same secret, then the page's own pay call.
      const page = { authorization: `Bearer ${session.clientSecret}`, 'content-type': 'application/json' };
      const view = await fetch(`${server.baseUrl}/v1/checkout/sessions/${session.id}/client`, { headers: page });
      assert.equal(view.status, 200, await view.text());
      const token = await (await fetch(`${server.baseUrl}/v1/tokens`, {
        method: 'POST',
        headers: page,
        body: JSON.stringify({ card: { number: '4242 4242 4242 4242', expMonth: 12, expYear: 2040, cvc: '123' } }),
      })).json() as { id: string };
      assert.match(token.id, /^tok_/);
      const pay = await fetch(`${server.baseUrl}/v1/checkout/sessions/${session.id}/client/pay`, {
        method: 'POST',
        headers: { ...page, 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify({ method: 'credit_card', cardToken: token.id }),
      });
      assert.equal(pay.status, 200, await pay.clone().text());

      // Waits for I/O: the server under test, a process of its own (its worker).
      const complete = await eventually(async () => {
        const s = await client.checkoutSessions.retrieve(session.id);
        return s.status === 'complete' && s;
      }, 'the session completes');
      assert.match(complete.paymentId!, /^pay_/);
      const payment = await client.payments.retrieve(complete.paymentId!);
      assert.equal(payment.status, 'approved');
      assert.equal(payment.amount, 2500);

      const event = await delivered('checkout_session.completed', session.id);
      if (event.type !== 'checkout_session.completed') return assert.fail(event.type);
      assert.equal(event.data.object.paymentId, complete.paymentId);
      const listed = await client.checkoutSessions.list({ status: 'complete' }).autoPagingToArray({ limit: 100 });
      assert.deepEqual(listed.map((s) => s.id), [session.id]);
    });
  });
}
