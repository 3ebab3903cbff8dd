// The disputes resource, through the SDK, against a server that really runs. A dispute is made by
// its source (an acquirer's chargeback notification, a Pix MED return), which a sandbox has none
// of: here the server's own dispute service applies a chargeback's stages to a sandbox card sale
// (what its card sync does with Adyen's notifications; the notifications themselves are tested
// in apps/server/test/card-disputes.test.ts), and the SDK reads the results over HTTP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NotFoundError, ValidationError, type Dispute, type DisputeEvent, type Pagamentos, type Payment } from '../src/index.js';
import { ENGINES, eventually, merchant, startServer, type Running } from './harness.js';
import { applyDisputeStage } from '../../../apps/server/src/modules/disputes/service.js';

for (const engine of ENGINES) {
  describe(`disputes (${engine})`, () => {
    let server: Running;
    let client: Pagamentos;

    const approvedCard = async (amountInCents: number): Promise<Payment> => {
      const p = await client.payments.create({ amountInCents, method: 'credit_card', cardToken: 'tok_visa' });
      // Waits for I/O: the server under test, a process of its own (its worker).
      return eventually(async () => {
        const now = await client.payments.retrieve(p.id);
        return now.status === 'approved' && now;
      }, `payment ${p.id} approved`);
    };
    const chargeback = (paymentId: string, ref: string, rank: number, status: Dispute['status']) =>
      server.t.store.write((tx) => applyDisputeStage(tx, server.t.store.engine, paymentId, {
        sourceRef: ref, connectorAccountId: 'cna_sdk_test', rank, status, amountCents: null, reason: 'Fraudulent', reasonCode: '10.4', respondBy: '2026-12-19T10:00:00.000Z',
      }, Date.now()));

    before(async () => {
      server = await startServer(engine);
      ({ client } = await merchant(server.baseUrl));
    });
    after(async () => {
      await server.close();
    });

    test('retrieve and list (filters, pages, for await); a lost one is debited, typed events carry the dispute', async () => {
      const sales = [await approvedCard(4_000), await approvedCard(5_000), await approvedCard(6_000)];
      for (const [i, p] of sales.entries()) assert.equal(await chargeback(p.id, `DSP${i}`, 1, 'needs_response'), true);
      assert.equal(await chargeback(sales[2].id, 'DSP2', 2, 'lost'), true);
      assert.equal(await chargeback(sales[2].id, 'DSP2', 1, 'needs_response'), false, 'an earlier stage moves nothing');

      const page = await client.disputes.list({ limit: 2 });
      assert.equal(page.data.length, 2);
      assert.equal(page.hasMore, true);
      const all: Dispute[] = [];
      for await (const d of client.disputes.list({ limit: 1 })) all.push(d);
      assert.deepEqual(all.map((d) => d.paymentId), sales.map((p) => p.id).reverse(), 'newest first, across pages');

      const lost = await client.disputes.list({ status: 'lost' });
      assert.equal(lost.data.length, 1);
      const d = await client.disputes.retrieve(lost.data[0].id);
      assert.match(d.id, /^dp_/);
      assert.equal(d.kind, 'card_chargeback');
      assert.equal(d.paymentId, sales[2].id);
      assert.equal(d.amount, 6_000);
      assert.equal(d.amountDebited, 6_000);
      assert.equal(d.respondBy, '2026-12-19T10:00:00.000Z');
      assert.deepEqual((await client.disputes.list({ paymentId: sales[0].id })).data.map((x) => x.status), ['needs_response']);
      assert.equal((await client.disputes.list({ kind: 'pix_med' })).data.length, 0);
      const debits = (await client.receivables.list({ paymentId: sales[2].id, limit: 100 })).data.filter((r) => r.disputeId === d.id);
      assert.equal(debits.reduce((s, r) => s + r.amount, 0), -6_000);

      const events = (await client.events.list({ type: 'dispute.closed' })).data as unknown as DisputeEvent[];
      assert.equal(events[0].data.object.id, d.id);
      assert.equal(events[0].data.object.status, 'lost');

      await assert.rejects(client.disputes.retrieve('dp_01jc6v8x2a9m3yq0d7b4e5f6g8'), (e: unknown) => e instanceof NotFoundError);
      await assert.rejects(client.disputes.list({ status: 'open' as never }), (e: unknown) => e instanceof ValidationError && e.param === 'status');
    });
  });
}
