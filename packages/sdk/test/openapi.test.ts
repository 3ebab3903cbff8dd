// The SDK against the server's current OpenAPI document: the committed generated types are
// what openapi-typescript makes of it now, and every public operation has an SDK method that
// sends that operation's method and path.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Pagamentos, createSandboxAccount, PagamentosError } from '../src/index.js';
import { GENERATED_FILE, generatedTypes, serverDocument } from '../scripts/openapi.js';
import { recordingFetch, startServer, type Running } from './harness.js';

type Operation = { operationId: string; security?: Array<Record<string, string[]>>; parameters?: Array<{ name: string; in: string; schema: { enum?: string[] } }> };
type Doc = { paths: Record<string, Record<string, Operation>> };

// Every public operation and the SDK call that performs it (ids are dummies: only the request
// the SDK sends is checked here; the other suites check the answers).
const CALLS: Record<string, (c: Pagamentos, options: { baseUrl: string; fetch: typeof fetch }) => Promise<unknown>> = {
  createSandboxAccount: (_c, options) => createSandboxAccount({ name: 'walk' }, options),
  createCardToken: (c) => c.tokens.create({ card: { number: '4242424242424242', expMonth: 1, expYear: 2040, cvc: '123' } }),
  createPayment: (c) => c.payments.create({ amountInCents: 100, method: 'pix' }),
  listPayments: (c) => c.payments.list(),
  getPayment: (c) => c.payments.retrieve('pay_x'),
  cancelPayment: (c) => c.payments.cancel('pay_x'),
  capturePayment: (c) => c.payments.capture('pay_x'),
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
  getDailyStatement: (c) => c.settlements.dailyStatement({ date: '2026-11-27' }),
  createRefund: (c) => c.refunds.create({ paymentId: 'pay_x' }),
  listRefunds: (c) => c.refunds.list(),
  getRefund: (c) => c.refunds.retrieve('ref_x'),
  listDisputes: (c) => c.disputes.list(),
  getDispute: (c) => c.disputes.retrieve('dp_x'),
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
// by a session's client secret (never an API key), made by the page the instance serves. The
// SDK is constructed with an API key, which the server refuses there; the test below holds
// this list to exactly the operations the document says take the client secret only.
const NOT_FOR_SERVERS = new Set(['getCheckoutSessionClientView', 'payCheckoutSession']);

function allPublicOperations(doc: Doc) {
  return Object.entries(doc.paths)
    .filter(([path]) => !path.startsWith('/admin'))
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), operationId: op.operationId, security: op.security })));
}

// The PSPs' notifications (issue 25): a payment service provider calls them at the URL it was
// given (an unguessable token per connector account), never a merchant's server.
const FOR_PSPS = '/v1/provider-callbacks/';

function publicOperations(doc: Doc) {
  return allPublicOperations(doc).filter((op) => !NOT_FOR_SERVERS.has(op.operationId) && !op.path.startsWith(FOR_PSPS));
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

  test("the operations left out are exactly the hosted page's own, which take a session's client secret and refuse API keys", async () => {
    const clientSecretOnly = allPublicOperations(doc).filter((op) => op.security !== undefined && op.security.length > 0 && op.security.every((s) => Object.keys(s).join() === 'checkoutClientSecret'));
    assert.deepEqual(clientSecretOnly.map((op) => op.operationId).sort(), [...NOT_FOR_SERVERS].sort());
    // What the SDK would send there (its secret key) is refused.
    const { secretKey } = await createSandboxAccount({}, { baseUrl: server.baseUrl }).then((a) => ({ secretKey: a.keys.secretKey.key }));
    for (const op of clientSecretOnly) {
      const res = await fetch(server.baseUrl + op.path.replace('{id}', 'cs_00000000000000000000000000'), {
        method: op.method, headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' }, body: op.method === 'GET' ? undefined : '{}',
      });
      assert.equal(res.status, 403, op.operationId);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'PERMISSION_DENIED', op.operationId);
    }
  });

  test('every event type of the document is in the webhook event union; one of a new family breaks the build, naming it', { timeout: 240_000 }, async () => {
    // The document as a server with two more event types would serve it: one of a family the
    // SDK knows (typed as that family at once) and one of a new family (untyped: the build stops).
    const changed = structuredClone(doc);
    const filter = changed.paths['/v1/events'].get.parameters!.find((p) => p.name === 'type' && p.in === 'query')!;
    assert.ok(filter.schema.enum!.includes('payment.approved') && filter.schema.enum!.includes('webhook.test'), 'the events list filter enumerates the event types');
    filter.schema.enum!.push('payment.disputed', 'invoice.created');
    const pkgDir = fileURLToPath(new URL('..', import.meta.url));
    const dir = mkdtempSync(join(pkgDir, '.event-types-'));
    try {
      cpSync(join(pkgDir, 'src'), join(dir, 'src'), { recursive: true });
      writeFileSync(join(dir, 'src/generated/openapi.ts'), await generatedTypes(changed));
      writeFileSync(join(dir, 'consumer.ts'), `
        import type { PaymentEvent, WebhookEvent, Payment } from './src/index.js';
        export const amount = (e: WebhookEvent): number => (e.type === 'payment.disputed' ? e.data.object.amount : 0);
        export const family = (e: Extract<WebhookEvent, { type: 'payment.disputed' }>): PaymentEvent => e;
        export const object = (e: Extract<WebhookEvent, { type: 'payment.disputed' }>): Payment => e.data.object;
      `);
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.build.json', compilerOptions: { noEmit: true, rootDir: '.' }, include: ['src', 'consumer.ts'] }));
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
      const out = await promisify(execFile)(process.execPath, [tsc, '-p', dir, '--pretty', 'false']).then(() => ({ code: 0, stdout: '' }), (e: { code: number; stdout: string }) => e);
      // One error, at the check, naming the type (payment.disputed, and the consumer, compile).
      const errors = out.stdout.split('\n').filter((line) => /error TS/.test(line));
      assert.equal(errors.length, 1, out.stdout);
      assert.match(errors[0], /\/src\/webhooks\.ts\(\d+,\d+\): error TS2344: /);
      assert.match(out.stdout, /'"invoice\.created"'.*'never'/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
