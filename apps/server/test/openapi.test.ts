import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { startApp, signup, auth, type TestApp, type Keys } from './helpers.js';

// The published OpenAPI document: its shape, that it says what the server does, and that
// Redocly's `recommended` ruleset finds no error in it.

type Json = Record<string, any>;
type Op = { path: string; method: string; op: Json };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const ERROR_REF = '#/components/schemas/ErrorResponse';
const NAMED = ['Payment', 'ErrorResponse', 'CreatePaymentRequest', 'PaymentList', 'CardToken', 'CreateTokenRequest', 'SandboxAccount', 'SandboxAccountRequest', 'Metadata'];

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const require = createRequire(import.meta.url);

function operations(doc: Json): Op[] {
  const out: Op[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) if (item[method]) out.push({ path, method, op: item[method] });
  }
  return out;
}

const label = ({ method, path, op }: Op) => `${method.toUpperCase()} ${path} (${op.operationId ?? 'no operationId'})`;

// Every `$ref` in the document, with where it sits.
function refs(node: unknown, at = '#'): Array<{ ref: string; at: string }> {
  if (Array.isArray(node)) return node.flatMap((v, i) => refs(v, `${at}/${i}`));
  if (!node || typeof node !== 'object') return [];
  const out: Array<{ ref: string; at: string }> = [];
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref') out.push({ ref: String(v), at });
    else out.push(...refs(v, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`));
  }
  return out;
}

function resolvePointer(doc: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!node || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

// The security that applies to an operation: its own, or the document's.
const securityOf = (doc: Json, op: Json): Json[] => op.security ?? doc.security ?? [];
const needsKey = (security: Json[]) => security.length > 0 && !security.some((req) => Object.keys(req).length === 0);

// Validates bodies against the document's own component schemas (JSON Schema 2020-12 in 3.1).
function schemaValidator(doc: Json) {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  const defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('"#/components/schemas/', '"openapi#/$defs/'));
  ajv.addSchema({ $id: 'openapi', $defs: defs });
  return (schemaOrRef: Json, value: unknown, what: string) => {
    const schema = schemaOrRef.$ref ? { $ref: String(schemaOrRef.$ref).replace('#/components/schemas/', 'openapi#/$defs/') } : schemaOrRef;
    const validate = ajv.compile(schema);
    assert.ok(validate(value), `${what} does not match its documented schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 500)}`);
  };
}

const responseSchema = (op: Json, status: number): Json | undefined => op.responses?.[String(status)]?.content?.['application/json']?.schema;

function runRedocly(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const pkg = require.resolve('@redocly/cli/package.json');
  const bin = join(dirname(pkg), (require(pkg) as { bin: Record<string, string> }).bin.redocly);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [bin, ...args],
      {
        cwd,
        timeout: 120_000,
        maxBuffer: 32 * 1024 * 1024,
        // No network here (and none wanted in CI): no telemetry, no update check.
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
      },
      (err, stdout, stderr) => {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an ExecFileException is an Error; @types/node's Omit<> hides it
        if (err && typeof (err as { code?: unknown }).code !== 'number') return reject(err);
        resolve({ code: err ? Number((err as { code: number }).code) : 0, stdout, stderr });
      },
    );
  });
}

describe('OpenAPI document', () => {
  let t: TestApp;
  let k: Keys;
  let doc: Json;
  let ops: Op[];

  before(async () => {
    t = await startApp('sqlite');
    k = await signup(t);
    // As a deployment serves it (servers is the address the document was fetched from).
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json', headers: { host: 'api.pagamentos.test' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    doc = res.json();
    ops = operations(doc);
  });
  after(() => t.teardown());

  test('is public OpenAPI 3.1 with info, servers and operations', () => {
    assert.match(doc.openapi, /^3\.1\.\d+$/);
    assert.ok(doc.info?.title && doc.info?.version && doc.info?.description, 'info has title, version and description');
    assert.ok(doc.info.license?.name, 'info.license');
    assert.ok(Array.isArray(doc.servers) && doc.servers.length > 0, 'servers');
    for (const s of doc.servers) assert.ok(!/\/$/.test(s.url) || s.url === '/', `server ${s.url} must not end in "/" (paths start with /v1)`);
    assert.ok(ops.length >= 6, `only ${ops.length} operations`);
    for (const path of ['/v1/payments', '/v1/payments/{id}', '/v1/tokens', '/v1/sandbox/accounts']) assert.ok(doc.paths[path], `${path} is documented`);
    // Internal routes stay out of the public document.
    for (const path of Object.keys(doc.paths)) {
      assert.ok(path.startsWith('/v1/') || path.startsWith('/admin/'), `${path} is under /v1 (or the /admin back office)`);
      assert.ok(!/\/(docs|openapi\.json|_bench)/.test(path), `${path} should be hidden`);
    }
  });

  test('named component schemas, no anonymous def-N or fallback names', () => {
    const names = Object.keys(doc.components?.schemas ?? {});
    for (const name of NAMED) assert.ok(names.includes(name), `components.schemas.${name} is missing (have: ${names.join(', ')})`);
    for (const name of names) assert.match(name, /^[A-Z][A-Za-z0-9]*$/, `component name ${name} is not a PascalCase type name`);
    const text = JSON.stringify(doc);
    assert.doesNotMatch(text, /def-\d+/, 'leftover def-N reference or name');
    assert.doesNotMatch(text, /#\/components\/schemas\/Schema\d+"/, 'a schema without $id got a fallback name');
    assert.doesNotMatch(text, /"\$id"/, '$id left inside the document');
    // 3.1 is JSON Schema 2020-12: `nullable` does not exist there (nulls are `type: null` / anyOf).
    assert.doesNotMatch(text, /"nullable"/);
  });

  test('every $ref is local and resolves', () => {
    const all = refs(doc);
    assert.ok(all.length > 0);
    for (const { ref, at } of all) {
      assert.ok(ref.startsWith('#/'), `non-local $ref ${ref} at ${at}`);
      assert.notEqual(resolvePointer(doc, ref), undefined, `$ref ${ref} at ${at} does not resolve`);
    }
  });

  test('every operation: unique operationId, declared tags, summary, error envelope on 4xx/5xx', () => {
    const declaredTags = new Set<string>((doc.tags ?? []).map((tag: Json) => tag.name));
    for (const tag of doc.tags ?? []) assert.ok(tag.description, `tag ${tag.name} has a description`);
    const seen = new Map<string, string>();
    for (const entry of ops) {
      const { op } = entry;
      const what = label(entry);
      assert.ok(typeof op.operationId === 'string' && /^[a-z][A-Za-z0-9]*$/.test(op.operationId), `${what}: operationId (camelCase)`);
      assert.ok(!seen.has(op.operationId), `${what}: operationId also used by ${seen.get(op.operationId)}`);
      seen.set(op.operationId, what);
      assert.ok(Array.isArray(op.tags) && op.tags.length > 0, `${what}: tags`);
      for (const tag of op.tags) assert.ok(declaredTags.has(tag), `${what}: tag "${tag}" is not declared in the document's tags (src/plugins/openapi.ts)`);
      assert.ok((op.summary ?? '').trim() || (op.description ?? '').trim(), `${what}: summary or description`);

      const statuses = Object.keys(op.responses ?? {});
      assert.ok(statuses.some((s) => /^2\d\d$/.test(s)), `${what}: a 2xx response`);
      const errors = statuses.filter((s) => /^[45]\d\d$|^[45]XX$|^default$/.test(s));
      assert.ok(errors.some((s) => s.startsWith('4')), `${what}: documents a 4xx`);
      assert.ok(errors.some((s) => s.startsWith('5')), `${what}: documents a 5xx`);
      for (const s of errors) {
        const r = op.responses[s];
        assert.ok(r.description, `${what} ${s}: description`);
        assert.equal(r.content?.['application/json']?.schema?.$ref, ERROR_REF, `${what} ${s}: must be the ErrorResponse envelope`);
      }
      if (needsKey(securityOf(doc, op))) assert.ok(op.responses['401'], `${what}: needs credentials, so documents 401`);
    }
  });

  test('2xx responses say what they return (not "Default Response")', () => {
    const generic = ops.flatMap((entry) =>
      Object.entries<Json>(entry.op.responses ?? {}).filter(([s, r]) => s.startsWith('2') && (!r.description || r.description === 'Default Response')).map(([s]) => `${label(entry)} ${s}`),
    );
    assert.deepEqual(generic, []);
  });

  test('the Error envelope and the bearer security schemes', () => {
    const error = doc.components.schemas.ErrorResponse;
    assert.deepEqual(error.required, ['error']);
    assert.equal(error.properties.error.$ref, '#/components/schemas/ErrorBody');
    const body = doc.components.schemas.ErrorBody;
    for (const f of ['code', 'message', 'correlationId']) assert.ok(body.required.includes(f), `error.${f} required`);
    assert.ok(body.properties.code.enum.includes('VALIDATION_ERROR'));

    const schemes = doc.components?.securitySchemes ?? {};
    for (const name of ['secretKey', 'publishableKey']) {
      assert.equal(schemes[name]?.type, 'http', `${name} is http`);
      assert.equal(schemes[name]?.scheme, 'bearer', `${name} is bearer`);
    }
    for (const [name, scheme] of Object.entries<Json>(schemes)) assert.ok(scheme.description, `${name} has a description`);
    // API routes take keys; the back office takes its session cookie, never a key.
    for (const entry of ops) {
      const names = securityOf(doc, entry.op).flatMap((r) => Object.keys(r));
      if (entry.path.startsWith('/admin/')) assert.ok(names.every((n) => schemes[n]?.type === 'apiKey' && schemes[n]?.in === 'cookie'), `${label(entry)}: admin routes use the session cookie`);
      // The hosted checkout page's own calls take its session's client secret, and only that.
      else if (entry.path.endsWith('/client') || entry.path.includes('/client/')) assert.deepEqual(names, ['checkoutClientSecret'], `${label(entry)}: the checkout page API takes the client secret`);
      // Card tokens: a key, or the hosted page's client secret while its session is open.
      else if (entry.op.operationId === 'createCardToken') assert.deepEqual(names.sort(), ['checkoutClientSecret', 'publishableKey', 'secretKey'], `${label(entry)}: a key, or the hosted page's client secret`);
      else assert.ok(names.every((n) => n === 'secretKey' || n === 'publishableKey'), `${label(entry)}: API routes use keys`);
    }
    assert.deepEqual(doc.security, [{ secretKey: [] }], 'the secret key is the default');
    for (const entry of ops) {
      for (const req of securityOf(doc, entry.op)) {
        for (const name of Object.keys(req)) assert.ok(schemes[name], `${label(entry)}: unknown security scheme ${name}`);
      }
    }
    const token = ops.find((o) => o.op.operationId === 'createCardToken');
    assert.ok(token && securityOf(doc, token.op).some((r) => 'publishableKey' in r), 'tokens take a publishable key');
    const signupOp = ops.find((o) => o.op.operationId === 'createSandboxAccount');
    assert.ok(signupOp && !needsKey(securityOf(doc, signupOp.op)), 'sandbox sign-up needs no key');
  });

  test('the documented security is what the server enforces', async () => {
    const fill = (path: string) => path.replace(/\{[^}]+\}/g, 'x_does_not_exist');
    for (const entry of ops) {
      const { method, path, op } = entry;
      const security = securityOf(doc, op);
      const hasBody = Boolean(op.requestBody);
      const send = (headers: Record<string, string>) =>
        t.app.inject({ method: method.toUpperCase() as 'GET', url: fill(path), headers, ...(hasBody ? { payload: {} } : {}) });

      const anonymous = await send({});
      if (needsKey(security)) {
        assert.equal(anonymous.statusCode, 401, `${label(entry)} without a key: ${anonymous.body}`);
        assert.equal(anonymous.json().error.code, 'AUTHENTICATION_REQUIRED');
      } else {
        assert.ok(![401, 403].includes(anonymous.statusCode), `${label(entry)} is documented as public but answered ${anonymous.statusCode}`);
      }

      if (needsKey(security)) {
        const publishable = await send(auth(k.publishableKey));
        const takesPk = security.some((req) => 'publishableKey' in req);
        if (takesPk) assert.ok(![401, 403].includes(publishable.statusCode), `${label(entry)} documents the publishable key but answered ${publishable.statusCode}`);
        else assert.equal(publishable.statusCode, 403, `${label(entry)} does not document the publishable key, yet answered ${publishable.statusCode}`);
      }
    }
  });

  test('real responses match their documented schemas', async () => {
    const check = schemaValidator(doc);
    const byId = new Map(ops.map((o) => [o.op.operationId as string, o]));
    const documented = (id: string, status: number) => {
      const schema = responseSchema(byId.get(id)!.op, status);
      assert.ok(schema, `${id} documents ${status}`);
      return schema;
    };

    const account = await t.app.inject({ method: 'POST', url: '/v1/sandbox/accounts', payload: { name: 'Schema check' } });
    check(documented('createSandboxAccount', 200), account.json(), 'createSandboxAccount 200');

    const token = await t.app.inject({ method: 'POST', url: '/v1/tokens', headers: auth(k.publishableKey), payload: { card: { number: '4242424242424242', expMonth: 12, expYear: 2099, cvc: '123' } } });
    assert.equal(token.statusCode, 200, token.body);
    check(documented('createCardToken', 200), token.json(), 'createCardToken 200');

    const pix = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: 1050, currency: 'BRL', method: 'pix', metadata: { orderId: '1' } } });
    assert.equal(pix.statusCode, 200, pix.body);
    check(documented('createPayment', 200), pix.json(), 'createPayment (pix) 200');
    const card = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amountInCents: 2500, method: 'credit_card', cardToken: token.json().id, customer: { name: 'Ana', email: 'ana@example.com', document: '123.456.789-09' } } });
    assert.equal(card.statusCode, 200, card.body);
    check(documented('createPayment', 200), card.json(), 'createPayment (card) 200');

    const one = await t.app.inject({ method: 'GET', url: `/v1/payments/${pix.json().id}`, headers: auth(k.secretKey) });
    check(documented('getPayment', 200), one.json(), 'getPayment 200');
    const canceled = await t.app.inject({ method: 'POST', url: `/v1/payments/${pix.json().id}/cancel`, headers: auth(k.secretKey) });
    assert.equal(canceled.statusCode, 200, canceled.body);
    check(documented('cancelPayment', 200), canceled.json(), 'cancelPayment 200');

    // Every list the secret key can read (GET without path parameters) answers what it documents.
    const takesSecretKey = (o: Op) => securityOf(doc, o.op).some((r) => 'secretKey' in r);
    for (const entry of ops.filter((o) => o.method === 'get' && !o.path.includes('{') && takesSecretKey(o))) {
      const res = await t.app.inject({ method: 'GET', url: entry.path, headers: auth(k.secretKey) });
      assert.equal(res.statusCode, 200, `${label(entry)}: ${res.body}`);
      check(responseSchema(entry.op, 200) ?? {}, res.json(), `${label(entry)} 200`);
    }

    // Errors, in the documented envelope.
    const invalid = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amount: '10', method: 'pix' } });
    assert.equal(invalid.statusCode, 400);
    check(documented('createPayment', 400), invalid.json(), 'createPayment 400');
    const missing = await t.app.inject({ method: 'GET', url: '/v1/payments/pay_does_not_exist', headers: auth(k.secretKey) });
    assert.equal(missing.statusCode, 404);
    check(documented('getPayment', 404), missing.json(), 'getPayment 404');
  });

  test('component examples match their own schemas', () => {
    const check = schemaValidator(doc);
    let count = 0;
    const visit = (node: unknown, ref: string) => {
      if (!node || typeof node !== 'object' || Array.isArray(node)) return;
      const schema = node as Json;
      if (Array.isArray(schema.examples)) {
        for (const [i, example] of schema.examples.entries()) {
          check({ $ref: ref }, example, `example ${i} of ${ref}`);
          count++;
        }
      }
      for (const [k, v] of Object.entries(schema)) {
        if (k === 'properties' && v && typeof v === 'object') for (const [p, s] of Object.entries(v)) visit(s, `${ref}/properties/${p}`);
        else if (['items', 'additionalProperties'].includes(k)) visit(v, `${ref}/${k}`);
        else if (['anyOf', 'oneOf', 'allOf'].includes(k) && Array.isArray(v)) v.forEach((s, i) => visit(s, `${ref}/${k}/${i}`));
      }
    };
    for (const name of Object.keys(doc.components.schemas)) visit(doc.components.schemas[name], `#/components/schemas/${name}`);
    assert.ok(count > 0, 'some schema has examples');
  });

  test('Redocly (recommended ruleset) reports no errors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    try {
      writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc, null, 2));
      writeFileSync(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
      const { code, stdout, stderr } = await runRedocly(['lint', 'openapi.json', '--config', 'redocly.yaml', '--format', 'json'], dir);
      let report: { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; severity: string; message: string; location?: Array<{ pointer?: string }> }> };
      try {
        report = JSON.parse(stdout);
      } catch {
        assert.fail(`redocly did not print a JSON report (exit ${code}):\n${stdout}\n${stderr}`);
      }
      const lines = (severity: string) =>
        report.problems.filter((p) => p.severity === severity).map((p) => `  ${p.ruleId}: ${p.message} at ${p.location?.map((l) => l.pointer).join(', ')}`);
      const warnings = lines('warn');
      console.log(`redocly lint: ${report.totals.errors} error(s), ${report.totals.warnings} warning(s)${warnings.length ? '\n' + warnings.join('\n') : ''}`);
      assert.equal(report.totals.errors, 0, `redocly lint errors:\n${lines('error').join('\n')}`);
      assert.equal(code, 0, `redocly exited ${code}: ${stderr}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
