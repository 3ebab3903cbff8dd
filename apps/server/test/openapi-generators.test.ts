import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startApp, signup, auth, ENGINES, type TestApp, type Keys } from './helpers.js';

// The traps that code generators for Java, .NET and Python fell into (issue 28), each a check
// over the whole document that /v1/openapi.json serves, and each shown to fail on a small bad
// sample first (a check that cannot fail proves nothing). examples/other-languages generates,
// compiles and runs the three clients against a running server (`npm run test:clients`).

type Json = Record<string, any>;
const require = createRequire(import.meta.url);

// Every Schema Object of a document, with where it sits (components, parameters, bodies, headers).
function schemas(doc: Json): Array<{ at: string; s: Json }> {
  const out: Array<{ at: string; s: Json }> = [];
  const visitSchema = (s: unknown, at: string): void => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return;
    const node = s as Json;
    out.push({ at, s: node });
    for (const key of ['items', 'additionalProperties', 'not']) if (node[key] && typeof node[key] === 'object') visitSchema(node[key], `${at}/${key}`);
    for (const key of ['oneOf', 'anyOf', 'allOf', 'prefixItems']) (node[key] ?? []).forEach((b: unknown, i: number) => visitSchema(b, `${at}/${key}/${i}`));
    for (const [name, p] of Object.entries<unknown>(node.properties ?? {})) visitSchema(p, `${at}/properties/${name}`);
  };
  const visit = (node: unknown, at: string): void => {
    if (Array.isArray(node)) return node.forEach((v, i) => visit(v, `${at}/${i}`));
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as Json)) {
      if (key === 'schema') visitSchema(value, `${at}/schema`);
      else if (key === 'schemas' && at === '#/components') for (const [name, s] of Object.entries<unknown>(value as Json)) visitSchema(s, `#/components/schemas/${name}`);
      else visit(value, `${at}/${key}`);
    }
  };
  visit(doc, '#');
  return out;
}
const isComponent = (at: string) => /^#\/components\/schemas\/[^/]+$/.test(at);
const deref = (doc: Json, s: Json): Json => (s.$ref ? doc.components.schemas[String(s.$ref).replace('#/components/schemas/', '')] ?? {} : s);
// The one value a property may have: `const` (3.1), or an `enum` of one (3.0).
const single = (p: Json | undefined): unknown => p?.const ?? (Array.isArray(p?.enum) && p.enum.length === 1 ? p.enum[0] : undefined);
const isIdentifier = (name: string) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
const INT32_MAX = 2 ** 31 - 1;

// 6. An object schema with properties anywhere but as a component gets a name invented by
// each generator (and renamed when the document changes); Payment.customer's invented name was
// the request's component's, and OpenAPI Generator kept only one of the two (1).
export function inlineObjects(doc: Json): string[] {
  return schemas(doc).filter(({ at, s }) => !isComponent(at) && s.properties && Object.keys(s.properties).length > 0).map(({ at }) => at);
}

// 2. An integer without a width is 32 bits in Java and C#: 3,000,000,000 centavos overflow.
// `int64`, or `int32` under a maximum that 32 bits hold.
export function unsizedIntegers(doc: Json): string[] {
  return schemas(doc).filter(({ s }) => {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.includes('integer')) return false;
    if (s.format === 'int64') return false;
    return !(s.format === 'int32' && typeof s.maximum === 'number' && s.maximum <= INT32_MAX && (s.minimum ?? 0) >= -INT32_MAX - 1);
  }).map(({ at, s }) => `${at} (format ${s.format ?? 'none'}, maximum ${s.maximum ?? 'none'})`);
}

// 3. A oneOf with a property that every branch requires with a const of its own can have a
// discriminator, and must; one without must have branches that a deduction tells apart: closed
// objects, each requiring a property that the other does not allow or a const the other differs in.
export function ambiguousOneOfs(doc: Json): string[] {
  const problems: string[] = [];
  for (const { at, s } of schemas(doc)) {
    if (!Array.isArray(s.oneOf)) continue;
    const branches = (s.oneOf as Json[]).map((b) => deref(doc, b));
    const candidates = Object.keys(branches[0]?.properties ?? {}).filter((name) => {
      const values = branches.map((b) => ((b.required ?? []).includes(name) ? single(b.properties?.[name]) : undefined));
      return values.every((v) => v !== undefined) && new Set(values).size === values.length;
    });
    if (s.discriminator) {
      // Every branch requires it and is in the mapping; where a branch says its value (3.1's
      // const), it is the mapping's (the 3.0 rendering leaves it a plain string: see openapi30.ts).
      const name = s.discriminator.propertyName;
      const mapping = Object.entries<string>(s.discriminator.mapping ?? {});
      (s.oneOf as Json[]).forEach((b, i) => {
        const value = mapping.find(([, target]) => target === b.$ref)?.[0];
        if (value === undefined) problems.push(`${at}: discriminator mapping leaves out branch ${i}`);
        if (!(branches[i].required ?? []).includes(name)) problems.push(`${at}: branch ${i} does not require the discriminator ${name}`);
        const single1 = single(branches[i].properties?.[name]);
        if (single1 !== undefined && single1 !== value) problems.push(`${at}: branch ${i} says ${name} is ${JSON.stringify(single1)}, the mapping ${String(value)}`);
      });
      continue;
    }
    if (candidates.length > 0) { problems.push(`${at}: oneOf without a discriminator, though ${candidates.join(', ')} could be one`); continue; }
    for (let i = 0; i < branches.length; i++) {
      for (let j = i + 1; j < branches.length; j++) {
        const [a, b] = [branches[i], branches[j]];
        const closed = a.additionalProperties === false && b.additionalProperties === false;
        const apart = (x: Json, y: Json) => (x.required ?? []).some((p: string) => !(p in (y.properties ?? {})) || (single(x.properties[p]) !== undefined && single(y.properties?.[p]) !== undefined && single(x.properties[p]) !== single(y.properties[p])));
        if (!closed || !(apart(a, b) && apart(b, a))) problems.push(`${at}: branches ${i} and ${j} cannot be told apart by the fields a value has`);
      }
    }
  }
  return problems;
}

// 4a. A boolean const is a Java enum of `true`, which does not compile.
export function booleanConsts(doc: Json): string[] {
  return schemas(doc).filter(({ s }) => typeof s.const === 'boolean' || (Array.isArray(s.enum) && s.enum.some((v: unknown) => typeof v === 'boolean'))).map(({ at }) => at);
}

// 4b. Text that ends a doc comment (`*/`) in any description, summary or title.
export function commentBreakers(doc: Json): string[] {
  const out: string[] = [];
  const visit = (node: unknown, at: string): void => {
    if (Array.isArray(node)) return node.forEach((v, i) => visit(v, `${at}/${i}`));
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as Json)) {
      if (['description', 'summary', 'title'].includes(key) && typeof value === 'string' && value.includes('*/')) out.push(`${at}/${key}`);
      else visit(value, `${at}/${key}`);
    }
  };
  visit(doc, '#');
  return out;
}

// 4c. A string enum whose values do not all make identifiers (`*` made an empty Java one) needs
// `x-enum-varnames`, one identifier per value.
export function enumsWithoutIdentifiers(doc: Json): string[] {
  return schemas(doc).filter(({ s }) => {
    if (!Array.isArray(s.enum) || !s.enum.every((v: unknown) => typeof v === 'string')) return false;
    const names = s['x-enum-varnames'];
    if (Array.isArray(names)) return !(names.length === s.enum.length && names.every((n: unknown) => typeof n === 'string' && isIdentifier(n)) && new Set(names).size === names.length);
    return s.enum.some((v) => !/[A-Za-z]/.test(v) || !isIdentifier(v.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^(\d)/, '_$1')));
  }).map(({ at, s }) => `${at} (${JSON.stringify(s.enum)})`);
}

const CHECKS: Record<string, (doc: Json) => string[]> = {
  'every object schema named': inlineObjects,
  'every integer sized (int64, or int32 under a maximum)': unsizedIntegers,
  'a discriminator where one can be, shapes told apart where not': ambiguousOneOfs,
  'no boolean const': booleanConsts,
  'no */ in descriptions': commentBreakers,
  'enum values make identifiers': enumsWithoutIdentifiers,
};

// One bad sample per trap: each check must find its trap in it.
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const BAD: Record<string, Json> = {
  'every object schema named': { components: { schemas: { Payment: { type: 'object', properties: { customer: { anyOf: [{ type: 'object', properties: { name: { type: 'string' } } }, { type: 'null' }] } } } } } },
  'every integer sized (int64, or int32 under a maximum)': { components: { schemas: { Balance: { type: 'object', properties: { pending: { type: 'integer' }, days: { type: 'integer', format: 'int32' } } } } } },
  'a discriminator where one can be, shapes told apart where not': {
    components: {
      schemas: {
        SplitShare: { oneOf: [ref('P'), ref('A')] },
        P: { type: 'object', required: ['recipientId', 'percentage'], properties: { recipientId: { type: 'string' }, percentage: { type: 'number' } } },
        A: { type: 'object', required: ['recipientId', 'amount'], properties: { recipientId: { type: 'string' }, amount: { type: 'integer', format: 'int64' } } },
        Pay: { oneOf: [ref('Card'), ref('Pix')] },
        Card: { type: 'object', additionalProperties: false, required: ['method', 'cardToken'], properties: { method: { type: 'string', const: 'credit_card' }, cardToken: { type: 'string' } } },
        Pix: { type: 'object', additionalProperties: false, required: ['method'], properties: { method: { type: 'string', const: 'pix' } } },
      },
    },
  },
  'no boolean const': { components: { schemas: { Deleted: { type: 'object', properties: { deleted: { type: 'boolean', const: true } } } } } },
  'no */ in descriptions': { components: { schemas: { Recipient: { type: 'object', properties: { document: { type: 'string', description: 'Masked: `11.***.***/****-81`.' } } } } } },
  'enum values make identifiers': { components: { schemas: { EventType: { type: 'string', enum: ['payment.approved', '*'] } } } },
};

function runRedocly(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const pkg = require.resolve('@redocly/cli/package.json');
  const bin = join(dirname(pkg), (require(pkg) as { bin: Record<string, string> }).bin.redocly);
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bin, ...args], {
      cwd, timeout: 120_000, maxBuffer: 32 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
    }, (err, stdout, stderr) => {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an ExecFileException is an Error; @types/node's Omit<> hides it
      if (err && typeof (err as { code?: unknown }).code !== 'number') return reject(err);
      resolve({ code: err ? Number((err as { code: number }).code) : 0, stdout, stderr });
    });
  });
}

describe('the document has none of the traps of generated clients (issue 28)', () => {
  let t: TestApp;
  let doc: Json;
  before(async () => {
    t = await startApp('sqlite');
    doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  });
  after(() => t.teardown());

  for (const [name, check] of Object.entries(CHECKS)) {
    test(`${name}: the check finds the trap in a bad sample, and none in the document`, () => {
      assert.ok(check(BAD[name]).length > 0, `the check "${name}" finds nothing in its bad sample`);
      assert.deepEqual(check(doc), [], name);
    });
  }

  test('the ambiguity check finds both traps of its sample (no discriminator where one can be; branches alike)', () => {
    const found = ambiguousOneOfs(BAD['a discriminator where one can be, shapes told apart where not']);
    assert.ok(found.some((p) => p.includes('/Pay:') && p.includes('method could be one')), found.join('\n'));
    assert.ok(found.some((p) => p.includes('/SplitShare:') && p.includes('cannot be told apart')), found.join('\n'));
  });

  test('the answer\'s customer and the request\'s are two components; SplitShare and CheckoutPayRequest are discriminated', () => {
    const s = doc.components.schemas;
    assert.deepEqual(s.Payment.properties.customer.anyOf[0], ref('Customer'));
    assert.deepEqual(s.CardPaymentRequest.properties.customer, ref('CustomerRequest'));
    assert.equal(s.PaymentCustomer, undefined, 'no component is named as a generator names Payment.customer');
    assert.equal(s.SplitShare.discriminator.propertyName, 'type');
    assert.deepEqual(s.SplitRule.properties.splits.items, ref('SplitShare'));
    assert.equal(s.CheckoutPayRequest.discriminator.propertyName, 'method');
    assert.deepEqual(s.CreateWebhookEndpointRequest.properties.events.items, ref('WebhookEventFilter'));
    assert.equal(s.WebhookEventFilter.enum, undefined, 'the filter (with `*`) is a pattern, not an enum');
    for (const [name, p] of Object.entries<Json>(s.Balance.properties)) if (p.type === 'integer') assert.equal(p.format, 'int64', name);
    assert.equal(s.BalanceAmounts.properties.pending.format, 'int64');
  });
});

describe('the OpenAPI 3.0 rendering at /v1/openapi-3.0.json', () => {
  let t: TestApp;
  let doc31: Json;
  let doc30: Json;
  let dir: string;
  before(async () => {
    t = await startApp('sqlite');
    const headers = { host: 'api.pagamentos.test' };
    doc31 = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json', headers })).json();
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi-3.0.json', headers });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    doc30 = res.json();
    dir = mkdtempSync(join(tmpdir(), 'openapi30-'));
  });
  after(async () => {
    await t.teardown();
    rmSync(dir, { recursive: true, force: true });
  });

  test('is 3.0.3, with the same operations, components and servers as the 3.1 document', () => {
    assert.equal(doc30.openapi, '3.0.3');
    assert.deepEqual(doc30.servers, doc31.servers);
    assert.deepEqual(Object.keys(doc30.paths), Object.keys(doc31.paths));
    assert.deepEqual(Object.keys(doc30.components.schemas), Object.keys(doc31.components.schemas));
    for (const [path, item] of Object.entries<Json>(doc31.paths)) {
      for (const [method, op] of Object.entries<Json>(item)) assert.equal(doc30.paths[path][method].operationId, op.operationId);
    }
  });

  test('has no 3.1-only schema keyword, and none of the traps', () => {
    for (const { at, s } of schemas(doc30)) {
      assert.ok(!('const' in s), `${at}: const`);
      assert.ok(!Array.isArray(s.type) && s.type !== 'null', `${at}: type ${JSON.stringify(s.type)}`);
      assert.ok(!('examples' in s) && !('propertyNames' in s), `${at}: examples or propertyNames`);
      assert.ok(typeof s.exclusiveMinimum !== 'number' && typeof s.exclusiveMaximum !== 'number', `${at}: numeric exclusive bound`);
      if (s.$ref) assert.deepEqual(Object.keys(s), ['$ref'], `${at}: a $ref with siblings`);
    }
    for (const [name, check] of Object.entries(CHECKS)) assert.deepEqual(check(doc30), [], name);
    // The nullable answer fields stay nullable.
    assert.deepEqual(doc30.components.schemas.Payment.properties.customer, { type: 'object', allOf: [ref('Customer')], nullable: true });
    assert.equal(doc30.components.schemas.Payment.properties.description.nullable, true);
  });

  test('Redocly\'s recommended rules find no error in it', async () => {
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc30));
    writeFileSync(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
    const { code, stdout, stderr } = await runRedocly(['lint', 'openapi.json', '--config', 'redocly.yaml', '--format', 'json'], dir);
    const report = JSON.parse(stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string; location?: Array<{ pointer?: string }> }> };
    const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `  ${p.ruleId}: ${p.message} at ${p.location?.map((l) => l.pointer).join(', ')}`);
    assert.equal(report.totals.errors, 0, `redocly lint errors:\n${errors.join('\n')}`);
    assert.equal(code, 0, `redocly exited ${code}: ${stderr}`);
  });
});

// 5. A whole minute is ISO 8601: what Java's OffsetDateTime prints (`2026-11-28T07:00Z`).
for (const engine of ENGINES) {
  describe(`date-time query parameters take ISO 8601 with seconds optional [${engine}]`, () => {
    let t: TestApp;
    let k: Keys;
    before(async () => {
      t = await startApp(engine);
      k = await signup(t);
    });
    after(() => t.teardown());

    test('a whole minute, seconds, a fraction and an offset are taken; a date alone is refused naming the rule', async () => {
      const created = await t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: { amountInCents: 1000, method: 'pix' } });
      assert.equal(created.statusCode, 200, created.body);
      const id = created.json().id as string;
      const createdAt = new Date(created.json().createdAt as string);
      const minute = new Date(Math.floor(createdAt.getTime() / 60_000) * 60_000);
      const wholeMinute = minute.toISOString().slice(0, 16) + 'Z';
      const nextMinute = new Date(minute.getTime() + 60_000).toISOString().slice(0, 16) + 'Z';
      const list = async (query: string) => t.app.inject({ method: 'GET', url: `/v1/payments?${query}`, headers: auth(k.secretKey) });
      for (const [query, found] of [
        [`createdGte=${wholeMinute}`, true],
        [`createdGte=${nextMinute}`, false],
        [`createdLte=${nextMinute}`, true],
        [`createdGte=${encodeURIComponent(minute.toISOString())}`, true],
        [`createdGte=${minute.toISOString().slice(0, 19)}Z`, true],
        [`createdGte=${encodeURIComponent(new Date(minute.getTime() - 3 * 3_600_000).toISOString().slice(0, 16) + '-03:00')}`, true],
        [`createdGte=${encodeURIComponent(new Date(minute.getTime() - 3 * 3_600_000 + 60_000).toISOString().slice(0, 16) + '-03:00')}`, false],
      ] as const) {
        const res = await list(query);
        assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
        assert.equal((res.json().data as Json[]).some((p) => p.id === id), found, query);
      }
      for (const bad of ['2026-11-28', '2026-11-28T07Z', '2026-11-28T07:00', '2026-13-28T07:00Z', '2026-11-28T24:00Z', '2026-02-30T07:00Z']) {
        const res = await list(`createdGte=${encodeURIComponent(bad)}`);
        assert.equal(res.statusCode, 400, `${bad}: ${res.body}`);
        const { error } = res.json();
        assert.equal(error.code, 'VALIDATION_ERROR');
        assert.equal(error.param, 'createdGte');
        assert.match(error.message, /ISO 8601 with a time zone, seconds optional/, bad);
      }
    });
  });
}
