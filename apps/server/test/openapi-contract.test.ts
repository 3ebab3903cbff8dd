import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { startApp, signup, auth, type TestApp, type Keys } from './helpers.js';
import { createAdminUser } from '../src/modules/admin/index.js';
import { contractViolations, registerContracts } from '../src/http/contract.js';
import { ApiError } from '../src/errors.js';

// The OpenAPI document as a contract: every object says what it is and in which mode, every
// status and header a route can answer is declared and none it cannot, and the document is
// one that code generators take as it is. (The test suites check the other direction: every
// response they see is declared, see checkContract in test/helpers.ts.)

type Json = Record<string, any>;
type Op = { path: string; method: string; op: Json };
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const ERROR_REF = '#/components/schemas/ErrorResponse';
// POSTs that change nothing (config.idempotent: false): no key is stored, no 409/422 of keys.
// Posts that store nothing an Idempotency-Key would keep (adminTestConnectorAccount only reads at the PSP).
const READ_ONLY_POSTS = new Set(['adminPreviewSplit', 'adminTestConnectorAccount']);

function operations(doc: Json): Op[] {
  const out: Op[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) if (item[method]) out.push({ path, method, op: item[method] });
  }
  return out;
}

const resolve = (doc: Json, schema: Json): Json => {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++) s = doc.components.schemas[String(s.$ref).replace('#/components/schemas/', '')];
  return s;
};

// Names that are types of their own in the languages clients are generated for (TypeScript and
// the browser, Java, C#, Python): a component named so shadows them in generated code. Every
// global TypeScript declares for the browser and the language (lib.dom, lib.es*), and by hand
// the other languages' own.
const tsLib = dirname(createRequire(import.meta.url).resolve('typescript/lib/lib.dom.d.ts'));
const TS_GLOBALS = readdirSync(tsLib).filter((f) => /^lib\.(dom|es\d+|es\d+\.\w+|webworker)\.d\.ts$/.test(f))
  .flatMap((f) => [...readFileSync(join(tsLib, f), 'utf8').matchAll(/^declare (?:var|function|class) (\w+)|^interface (\w+)/gm)].map((m) => m[1] ?? m[2]));
const BUILT_INS = new Set([
  ...TS_GLOBALS,
  'Error', 'Object', 'Array', 'String', 'Number', 'Boolean', 'Date', 'Map', 'Set', 'Promise', 'Symbol', 'Function', 'RegExp',
  'JSON', 'Math', 'Record', 'Partial', 'Response', 'Request', 'Headers', 'URL', 'Blob', 'File', 'FormData',
  'Integer', 'Long', 'Class', 'Exception', 'Void', 'List', 'Type', 'Task', 'Decimal', 'Dict', 'Tuple',
]);

describe('OpenAPI contract', () => {
  let t: TestApp;
  let k: Keys;
  let doc: Json;
  let ops: Op[];

  before(async () => {
    t = await startApp('sqlite', {}, { worker: false });
    k = await signup(t);
    doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    ops = operations(doc);
  });
  after(() => t.teardown());

  test('every resource has `object` (a const) and `livemode`, lists and the error envelope excepted', () => {
    const problems: string[] = [];
    let resources = 0;
    const visit = (schema: Json, where: string, isResource: boolean, seen: Set<Json>) => {
      const s = resolve(doc, schema);
      if (!s || s.type !== 'object' || seen.has(s)) return;
      seen.add(s);
      const props: Json = s.properties ?? {};
      if (props.object?.const === 'list') {
        visit(props.data?.items ?? {}, `${where}.data[]`, true, seen);
        return;
      }
      if (isResource || 'object' in props) {
        resources++;
        if (typeof props.object?.const !== 'string' || props.object?.type !== 'string') problems.push(`${where}: no \`object\` const`);
        if (!(props.livemode?.type === 'boolean')) problems.push(`${where}: no boolean \`livemode\``);
        for (const f of ['object', 'livemode']) if (!(s.required ?? []).includes(f)) problems.push(`${where}: \`${f}\` not required`);
      }
      for (const [name, p] of Object.entries<Json>(props)) {
        if (name === 'data' && props.object?.const === 'event') continue; // the event's payload is one of the resources
        const inner = resolve(doc, p);
        for (const member of [inner, ...(inner?.anyOf ?? []), ...(inner?.oneOf ?? [])]) {
          visit(member?.type === 'array' ? member.items ?? {} : member ?? {}, `${where}.${name}`, false, seen);
        }
      }
    };
    for (const { op, method, path } of ops) {
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (!schema || !status.startsWith('2')) continue;
        const name = String(schema.$ref ?? '').replace('#/components/schemas/', '') || `${method} ${path}`;
        visit(schema, name, true, new Set());
      }
    }
    assert.ok(resources >= 20, `only ${resources} resources seen`);
    assert.deepEqual(problems, []);
  });

  test('generator-proof: typed schemas, const for single values, no built-in names, named bodies', () => {
    const problems: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}/${i}`));
      const s = node as Json;
      const combinator = s.oneOf ?? s.anyOf ?? s.allOf;
      if (!s.$ref && s.type === undefined && !combinator) problems.push(`${at}: no type`);
      if (s.const !== undefined && s.type === undefined) problems.push(`${at}: const without type`);
      if (Array.isArray(s.enum) && s.enum.length === 1) problems.push(`${at}: enum of one value (use const)`);
      if (Array.isArray(s.enum) && s.type === undefined) problems.push(`${at}: enum without type`);
      for (const [key, value] of Object.entries(s)) {
        if (key === 'properties') for (const [p, v] of Object.entries<Json>(value)) walk(v, `${at}/properties/${p}`);
        else if (['items', 'additionalProperties', 'not', 'propertyNames'].includes(key) && value && typeof value === 'object') walk(value, `${at}/${key}`);
        else if (['oneOf', 'anyOf', 'allOf', 'prefixItems'].includes(key)) walk(value, `${at}/${key}`);
      }
    };
    for (const [name, schema] of Object.entries<Json>(doc.components.schemas)) {
      if (BUILT_INS.has(name)) problems.push(`component ${name} is named after a language built-in`);
      walk(schema, `#/components/schemas/${name}`);
    }
    for (const { op, method, path } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) walk(p.schema, `${where} parameter ${p.name}`);
      for (const [name, h] of Object.entries<Json>(doc.components.headers ?? {})) walk(h.schema, `header ${name}`);
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (op.requestBody && !body?.$ref) problems.push(`${where}: request body is not a named component`);
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (schema && !schema.$ref) problems.push(`${where} ${status}: response body is not a named component`);
      }
    }
    assert.deepEqual(problems, []);
  });

  test('servers: the instance\'s absolute URL (PUBLIC_URL, else the host the request was sent to)', async () => {
    const viaHost = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json', headers: { host: 'api.example.test:8443' } })).json();
    assert.deepEqual(viaHost.servers.map((s: Json) => s.url), ['http://api.example.test:8443']);
    const forwarded = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json', headers: { host: 'evil.test/"><script>' } })).json();
    assert.match(forwarded.servers[0].url, /^http:\/\/localhost:\d+$/, 'a Host header that is not a plain host[:port] is not believed');
    const pub = await startApp('sqlite', { publicUrl: 'https://pay.example.com/' }, { worker: false });
    try {
      const d = (await pub.app.inject({ method: 'GET', url: '/v1/openapi.json', headers: { host: 'other.test' } })).json();
      assert.deepEqual(d.servers.map((s: Json) => s.url), ['https://pay.example.com']);
    } finally {
      await pub.teardown();
    }
  });

  test('declared statuses follow from what the route can meet, and none it cannot', () => {
    const problems: string[] = [];
    for (const { op, method, path } of ops) {
      const where = `${method.toUpperCase()} ${path} (${op.operationId})`;
      const declared = new Set(Object.keys(op.responses).map(Number));
      const security: Json[] = op.security ?? doc.security;
      const needsKey = security.length > 0 && security.some((r) => 'secretKey' in r || 'publishableKey' in r || 'checkoutClientSecret' in r);
      const admin = path.startsWith('/admin/');
      const signIn = admin && method === 'post' && path === '/admin/session';
      const body = ['post', 'patch', 'delete', 'put'].includes(method);
      // Keys are stored for the mutations of a key or an admin session; the split preview only
      // computes, so it stores none.
      const idempotent = body && (needsKey || (admin && !signIn)) && !READ_ONLY_POSTS.has(op.operationId);
      const expect = (status: number, when: boolean) => {
        if (when !== declared.has(status)) problems.push(`${where}: ${status} ${when ? 'missing' : 'declared, but it cannot happen'}`);
      };
      // GET /admin/session/status answers 200 without a session: it is how a page asks.
      expect(401, needsKey || (admin && path !== '/admin/session/status'));
      // PSP callbacks: 403 for a client certificate that did not verify (test/pix-live.test.ts).
      expect(403, needsKey || admin || path.startsWith('/v1/provider-callbacks/'));
      expect(413, body);
      expect(415, body);
      // Admin requests refused without a session count against the address's anonymous limit.
      expect(429, needsKey || admin || op.operationId === 'createSandboxAccount');
      expect(409, idempotent);
      // Every write can meet a full write queue (WRITE_QUEUE_MAX_PENDING).
      expect(503, body && !READ_ONLY_POSTS.has(op.operationId));
      expect(405, false);
      if (path.includes('{')) expect(404, true);
      if (declared.has(404) && !path.includes('{')) assert.ok(['createRefund', 'createSandboxAccount'].includes(op.operationId), `${where}: 404 without an id in the path`);
      for (const status of declared) {
        const response = op.responses[status];
        if (status >= 400) assert.equal(response.content?.['application/json']?.schema?.$ref, ERROR_REF, `${where} ${status}`);
        const headers = Object.keys(response.headers ?? {});
        if (!headers.includes('X-Correlation-Id')) problems.push(`${where} ${status}: no X-Correlation-Id`);
        if ((status === 429 || status === 503) && !headers.includes('Retry-After')) problems.push(`${where} ${status}: no Retry-After`);
        if (((needsKey && status !== 401) || status === 429) && !headers.includes('RateLimit-Remaining')) problems.push(`${where} ${status}: no RateLimit-*`);
        if (idempotent && status === 200 && !headers.includes('Idempotent-Replayed')) problems.push(`${where}: no Idempotent-Replayed`);
      }
      if (idempotent) {
        const headers = Object.keys(op.responses[409].headers ?? {});
        if (!headers.includes('Retry-After')) problems.push(`${where} 409: no Retry-After (IDEMPOTENCY_KEY_IN_USE)`);
      }
    }
    for (const id of ['adminCreateSession', 'adminDeleteSession']) {
      const op = ops.find((o) => o.op.operationId === id)!.op;
      assert.ok(op.responses[200].headers['Set-Cookie'], `${id} declares Set-Cookie`);
    }
    for (const name of Object.keys(doc.components.headers)) assert.ok(doc.components.headers[name].description, name);
    assert.deepEqual(problems, []);
  });

  test('every declared status the plugins produce is produced by a real request', async () => {
    // A body the schema accepts: the request body's first example, or none.
    const example = (op: Json) => {
      const body = op.requestBody?.content?.['application/json']?.schema;
      return (body ? resolve(doc, body).examples?.[0] : undefined) ?? {};
    };
    const email = `contract-${process.pid}@example.com`;
    await createAdminUser(t.store, email, 'a long enough passphrase');
    const login = await t.app.inject({ method: 'POST', url: '/admin/session', payload: { email, password: 'a long enough passphrase' } });
    const cookie = (login.headers['set-cookie'] as string).split(';')[0];
    const csrf = login.json().csrfToken as string;
    const limited = await startApp('sqlite', { rateLimitPerMinute: 1, sandboxSignupPerHour: 1 }, { worker: false });
    const limitedKeys = await signup(limited);
    // A checkout session there, made before its key's one request a minute is spent.
    const limitedCs = (await limited.app.inject({ method: 'POST', url: '/v1/checkout/sessions', headers: auth(limitedKeys.secretKey), payload: { amount: 100 } })).json();
    const off = await startApp('sqlite', { sandboxSignupEnabled: false }, { worker: false });
    const missed: string[] = [];
    let probed = 0;
    try {
      for (const { op, method, path } of ops) {
        const where = `${method.toUpperCase()} ${path} (${op.operationId})`;
        const admin = path.startsWith('/admin/');
        const signIn = admin && method === 'post' && path === '/admin/session';
        const usesPk = (op.security ?? doc.security).some((r: Json) => 'publishableKey' in r);
        // The checkout page API takes a real session's client secret (an unknown session is
        // refused by its secret, 401, before it could be a 404).
        const usesCs = (op.security ?? doc.security).some((r: Json) => 'checkoutClientSecret' in r);
        const csOf = async (app: TestApp, key: string) => (await app.app.inject({ method: 'POST', url: '/v1/checkout/sessions', headers: auth(key), payload: { amount: 100 } })).json();
        const cs = usesCs ? await csOf(t, k.secretKey) : null;
        const credentials: Record<string, string> = admin
          ? { cookie, ...(method === 'get' ? {} : { 'x-csrf-token': csrf }) }
          : cs ? { authorization: `Bearer ${cs.clientSecret}`, 'idempotency-key': randomUUID() }
          : (op.security ?? doc.security).length === 0 ? {} : auth(usesPk ? k.publishableKey : k.secretKey);
        const url = path.replace(/\{[^}]+\}/g, cs ? cs.id : 'x_does_not_exist');
        const send = (app: TestApp, headers: Record<string, string>, payload?: string, u = url) =>
          app.app.inject({ method: method.toUpperCase() as 'GET', url: u, headers, ...(payload === undefined ? {} : { payload }) });
        const json = { 'content-type': 'application/json' };
        const probes: Record<number, () => Promise<{ statusCode: number }>> = {
          400: () => (['post', 'put', 'patch', 'delete'].includes(method) ? send(t, { ...credentials, ...json }, '{"broken":') : send(t, credentials, undefined, path.includes('{') && !cs ? path.replace(/\{[^}]+\}/g, 'x'.repeat(65)) : `${url}?limit=0`)),
          401: () => (signIn ? send(t, json, JSON.stringify({ email, password: 'not the password' })) : send(t, admin ? {} : { authorization: cs ? `Bearer ${cs.id}_secret_${'A'.repeat(40)}` : 'Bearer sk_test_' + 'A'.repeat(32) })),
          403: () => send(t, admin ? { authorization: `Bearer ${k.secretKey}` } : auth(k.publishableKey)),
          404: () => (op.operationId === 'createSandboxAccount' ? send(off, json, '{}') : send(t, { ...credentials, ...json }, ['post', 'put', 'patch', 'delete'].includes(method) ? JSON.stringify(example(op)) : undefined)),
          413: () => send(t, { ...credentials, ...json }, JSON.stringify({ pad: 'x'.repeat(t.config.bodyLimitBytes) })),
          415: () => send(t, { ...credentials, 'content-type': 'text/plain' }, 'hello'),
          429: async () => {
            const h = op.operationId === 'createSandboxAccount' ? json : cs ? { authorization: `Bearer ${limitedCs.clientSecret}` } : auth(usesPk ? limitedKeys.publishableKey : limitedKeys.secretKey);
            const payload = method === 'get' ? undefined : '{}';
            const u = cs ? path.replace(/\{[^}]+\}/g, limitedCs.id) : url;
            await send(limited, h, payload, u);
            return send(limited, h, payload, u);
          },
        };
        for (const status of Object.keys(op.responses).map(Number)) {
          const probe = probes[status];
          if (!probe) continue;
          if (status === 403 && usesPk) continue;
          if (status === 403 && path.startsWith('/v1/provider-callbacks/')) continue; // a callback without the PSP's certificate: test/pix-live.test.ts // the publishable routes take both kinds of key: 403 is live mode not activated (errors.test)
          if (status === 429 && admin) continue; // sign-in throttling: admin.test; requests without a session: hardening.test
          if (status === 404 && cs) continue; // the session's own secret names an existing session: test/checkout.test.ts
          const res = await probe();
          probed++;
          if (res.statusCode !== status) missed.push(`${where}: probe for ${status} got ${res.statusCode}`);
        }
      }
    } finally {
      await limited.teardown();
      await off.teardown();
    }
    assert.ok(probed > 100, `only ${probed} probes`);
    assert.deepEqual(missed, []);
  });

  test('a response whose status or headers the route does not declare is caught', async () => {
    const app = Fastify();
    registerContracts(app);
    const seen: string[] = [];
    app.addHook('onSend', async (req, reply, payload) => {
      reply.header('x-correlation-id', req.id);
      return payload;
    });
    app.addHook('onResponse', async (req, reply) => {
      seen.push(...contractViolations(req, reply));
    });
    app.get('/v1/things/:id', { config: { auth: 'secret' }, schema: { operationId: 'getThing', response: { 200: { type: 'object' } } } }, async (req, reply) => {
      const which = (req.params as { id: string }).id;
      if (which === 'conflict') throw new ApiError('INVALID_STATE', 'undeclared');
      if (which === 'cookie') reply.header('set-cookie', 'a=b');
      if (which === 'missing') reply.code(404 as never); // declared: the route has an id
      return which === 'missing' ? '{}' : {};
    });
    app.setErrorHandler(async (err, _req, reply) => reply.code((err as ApiError).statusCode ?? 500).send({}));
    await app.ready();
    for (const id of ['ok', 'missing', 'conflict', 'cookie']) await app.inject({ method: 'GET', url: `/v1/things/${id}` });
    await app.close();
    assert.equal(seen.length, 2, seen.join('\n'));
    assert.match(seen[0], /getThing .* answered 409, which it does not declare/);
    assert.match(seen[1], /getThing .* 200 sent Set-Cookie, which it does not declare/);
  });
});
