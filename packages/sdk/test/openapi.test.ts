// The SDK against the server's current OpenAPI document: the committed generated types are
// what openapi-typescript makes of it now, and every public operation has an SDK method that
// sends that operation's method and path.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Pagamentos, createSandboxAccount, PagamentosError } from '../src/index.js';
import { GENERATED_FILE, generatedTypes, serverDocument } from '../scripts/openapi.js';
import { recordingFetch, startServer, type Running } from './harness.js';

type Doc = { paths: Record<string, Record<string, { operationId: string }>> };

// Every public operation and the SDK call that performs it (ids are dummies: only the request
// the SDK sends is checked here; the other suites check the answers).
const CALLS: Record<string, (c: Pagamentos, options: { baseUrl: string; fetch: typeof fetch }) => Promise<unknown>> = {
  createSandboxAccount: (_c, options) => createSandboxAccount({ name: 'walk' }, options),
  createCardToken: (c) => c.tokens.create({ card: { number: '4242424242424242', expMonth: 1, expYear: 2040, cvc: '123' } }),
  createPayment: (c) => c.payments.create({ amountInCents: 100, method: 'pix' }),
  listPayments: (c) => c.payments.list(),
  getPayment: (c) => c.payments.retrieve('pay_x'),
  cancelPayment: (c) => c.payments.cancel('pay_x'),
  sandboxPayPixPayment: (c) => c.sandbox.payPix('pay_x'),
  createRecipient: (c) => c.recipients.create({} as never),
  listRecipients: (c) => c.recipients.list(),
  getRecipient: (c) => c.recipients.retrieve('rcp_x'),
  updateRecipient: (c) => c.recipients.update('rcp_x', { name: 'x' }),
  listReceivables: (c) => c.receivables.list(),
  getReceivable: (c) => c.receivables.retrieve('rcv_x'),
  listSettlements: (c) => c.settlements.list(),
  getSettlement: (c) => c.settlements.retrieve('stl_x'),
  listSettlementReceivables: (c) => c.settlements.listReceivables('stl_x'),
  createRefund: (c) => c.refunds.create({ paymentId: 'pay_x' }),
  listRefunds: (c) => c.refunds.list(),
  getRefund: (c) => c.refunds.retrieve('ref_x'),
  getBalance: (c) => c.balance.retrieve(),
  createWebhookEndpoint: (c) => c.webhookEndpoints.create({} as never),
  listWebhookEndpoints: (c) => c.webhookEndpoints.list(),
  getWebhookEndpoint: (c) => c.webhookEndpoints.retrieve('whe_x'),
  updateWebhookEndpoint: (c) => c.webhookEndpoints.update('whe_x', { enabled: true }),
  deleteWebhookEndpoint: (c) => c.webhookEndpoints.del('whe_x'),
  rotateWebhookEndpointSecret: (c) => c.webhookEndpoints.rotateSecret('whe_x'),
  testWebhookEndpoint: (c) => c.webhookEndpoints.test('whe_x'),
  listWebhookDeliveries: (c) => c.webhookEndpoints.listDeliveries('whe_x'),
  listEvents: (c) => c.events.list(),
  getEvent: (c) => c.events.retrieve('evt_x'),
  redeliverEvent: (c) => c.events.redeliver('evt_x'),
  createCheckoutSession: (c) => c.checkoutSessions.create({ amount: 100 }),
  listCheckoutSessions: (c) => c.checkoutSessions.list(),
  getCheckoutSession: (c) => c.checkoutSessions.retrieve('cs_x'),
  expireCheckoutSession: (c) => c.checkoutSessions.expire('cs_x'),
};

// SDK methods written ahead of the server; each must leave this list when the document gets the
// operation.
const AWAITING_SERVER = new Set<string>([]);

// Operations that are not a merchant server's: the hosted checkout page's own calls, authorized
// by a session's client secret (never an API key), made by the page the instance serves.
const NOT_FOR_SERVERS = new Set(['getCheckoutSessionClientView', 'payCheckoutSession']);

function publicOperations(doc: Doc) {
  return Object.entries(doc.paths)
    .filter(([path]) => !path.startsWith('/admin'))
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), operationId: op.operationId })))
    .filter((op) => !NOT_FOR_SERVERS.has(op.operationId));
}

describe('the OpenAPI document', () => {
  let doc: Doc;
  let server: Running;

  before(async () => {
    server = await startServer('sqlite');
    doc = (await (await fetch(`${server.baseUrl}/v1/openapi.json`)).json()) as Doc;
  });
  after(() => server.close());

  test('the committed generated types are what openapi-typescript makes of the current document', async () => {
    const fresh = await generatedTypes(await serverDocument());
    const committed = readFileSync(GENERATED_FILE, 'utf8');
    assert.ok(fresh === committed, 'src/generated/openapi.ts is stale: run `npm run generate -w packages/sdk` and commit it');
    // serverDocument() builds the app in process; the running server serves the same document.
    assert.equal(await generatedTypes(doc as never), committed);
  });

  test('every public operation has an SDK method that sends its method and path', async () => {
    const operations = publicOperations(doc);
    assert.ok(operations.length >= 30);
    const missing = operations.filter((op) => !CALLS[op.operationId]).map((op) => `${op.operationId} (${op.method} ${op.path})`);
    assert.deepEqual(missing, [], 'operations without an SDK method');
    const inDoc = new Set(operations.map((op) => op.operationId));
    assert.deepEqual(Object.keys(CALLS).filter((id) => !inDoc.has(id) && !AWAITING_SERVER.has(id)), [], 'SDK methods for no operation');
    assert.deepEqual([...AWAITING_SERVER].filter((id) => inDoc.has(id)), [], 'the server has these now: drop them from AWAITING_SERVER');

    const { secretKey } = await createSandboxAccount({}, { baseUrl: server.baseUrl }).then((a) => ({ secretKey: a.keys.secretKey.key }));
    for (const op of operations) {
      const recorded = recordingFetch();
      const client = new Pagamentos(secretKey, { baseUrl: server.baseUrl, fetch: recorded.fetch, maxRetries: 0 });
      await CALLS[op.operationId](client, { baseUrl: server.baseUrl, fetch: recorded.fetch }).catch((e: unknown) => {
        if (!(e instanceof PagamentosError) || e.status === undefined) throw e;
      });
      assert.equal(recorded.calls.length, 1, op.operationId);
      const sent = recorded.calls[0];
      const template = new RegExp('^' + op.path.replace(/\{[^}]+\}/g, '[^/]+') + '$');
      assert.equal(sent.method, op.method, op.operationId);
      assert.match(new URL(sent.url).pathname, template, op.operationId);
      assert.notEqual(sent.status, 405, `${op.operationId}: the server knows no such method on that path`);
    }
  });
});
