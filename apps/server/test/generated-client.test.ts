import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { generate } from 'openapi-typescript-codegen';
import { startApp, signup, type TestApp, type Keys } from './helpers.js';

// The document is one that code generators take as it is: a TypeScript client generated from
// /v1/openapi.json by a generator the project does not otherwise use (openapi-typescript-codegen,
// which the SDK's openapi-typescript is not), type-checked strictly, then driven against a
// really listening server: create a card payment, replay it with the same Idempotency-Key, fetch
// it, list it, and meet an error. Its base URL is the document's own `servers` entry.

const DRIVER = `
import { ApiError, OpenAPI, PaymentsService, type CardPaymentRequest, type ErrorResponse, type Payment, type PaymentList } from './client/index';

export async function run(token: string, key: string) {
  OpenAPI.TOKEN = token;
  const body: CardPaymentRequest = { amountInCents: 2500, method: 'credit_card', cardToken: 'tok_visa', metadata: { orderId: key } };
  const created: Payment = await PaymentsService.createPayment({ requestBody: body, idempotencyKey: key });
  const replayed: Payment = await PaymentsService.createPayment({ requestBody: body, idempotencyKey: key });
  const fetched: Payment = await PaymentsService.getPayment({ id: created.id });
  const page: PaymentList = await PaymentsService.listPayments({ limit: 10 });
  let refused: { status: number; code: string; param?: string } | null = null;
  try {
    await PaymentsService.createPayment({ requestBody: { ...body, cardToken: 'not a token' } });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const envelope = error.body as ErrorResponse;
    refused = { status: error.status, code: envelope.error.code, param: envelope.error.param };
  }
  return { base: OpenAPI.BASE, created, replayed, fetched, listed: page.data.map((p) => p.id), refused };
}
`;

describe('a client generated from the document (openapi-typescript-codegen)', () => {
  let t: TestApp;
  let k: Keys;
  let base: string;
  let dir: string;

  before(async () => {
    t = await startApp('sqlite');
    k = await signup(t);
    base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('127.0.0.1', 'localhost');
    dir = mkdtempSync(join(tmpdir(), 'generated-client-'));
  });
  after(async () => {
    await t.teardown();
    rmSync(dir, { recursive: true, force: true });
  });

  test('generates, type-checks strictly and drives create, replay, fetch and list against the server', async () => {
    const res = await fetch(`${base}/v1/openapi.json`);
    assert.equal(res.status, 200);
    const doc = await res.json();
    assert.deepEqual(doc.servers.map((s: { url: string }) => s.url), [base], 'servers is this instance\'s absolute URL');

    await generate({ input: doc, output: join(dir, 'client'), httpClient: 'fetch', useOptions: true });
    writeFileSync(join(dir, 'package.json'), '{"type":"module","private":true}\n');
    writeFileSync(join(dir, 'driver.ts'), DRIVER);

    const program = ts.createProgram([join(dir, 'driver.ts')], {
      strict: true,
      noImplicitReturns: true,
      noFallthroughCasesInSwitch: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file ? `${d.file.fileName.replace(dir, '')}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : '';
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
    assert.deepEqual(diagnostics, [], 'the generated client and its use type-check strictly');
    assert.ok(program.getSourceFiles().some((f) => f.fileName.endsWith('models/ErrorResponse.ts')));

    const driver = (await import(pathToFileURL(join(dir, 'driver.ts')).href)) as { run(token: string, key: string): Promise<Record<string, any>> };
    const out = await driver.run(k.secretKey, 'generated-client-1');
    assert.equal(out.base, base);
    assert.match(out.created.id, /^pay_/);
    assert.equal(out.created.status, 'pending');
    assert.equal(out.created.object, 'payment');
    assert.deepEqual(out.replayed, out.created, 'the same Idempotency-Key answers the same payment');
    assert.equal(out.fetched.id, out.created.id);
    assert.equal(out.fetched.amount, 2500);
    assert.ok(out.listed.includes(out.created.id));
    assert.deepEqual(out.refused, { status: 400, code: 'VALIDATION_ERROR', param: 'cardToken' });
    const rows = await t.store.db.selectFrom('payments').select('id').where('account_id', '=', k.accountId).execute();
    assert.equal(rows.length, 1, 'the replay created nothing');
  });
});
