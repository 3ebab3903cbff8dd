import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ENGINES, startApp, signup, auth, type TestApp, type Keys } from './helpers.js';
import { createAdminUser } from '../src/modules/admin/index.js';
import { LooseSplitShare } from '../src/modules/admin/split-rules/schemas.js';
import { checkShares } from '../src/modules/admin/split-rules/service.js';

// Rules a schema can say live in the schema: the payment shapes and a split share's
// percentage-or-amount as oneOf, bank account and webhook url patterns, minProperties on
// updates. The server validates with those very schemas and still answers one clear message.

type Json = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

// A validator over the published document's own components.
function documentValidator(doc: Json) {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  const defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('"#/components/schemas/', '"openapi#/$defs/'));
  ajv.addSchema({ $id: 'openapi', $defs: defs });
  return (name: string) => ajv.compile({ $ref: `openapi#/$defs/${name}` });
}

for (const engine of ENGINES) {
  describe(`request shapes in the schema (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    let doc: Json;
    const pay = (payload: unknown) => t.app.inject({ method: 'POST', url: '/v1/payments', headers: auth(k.secretKey), payload: payload as object });

    before(async () => {
      t = await startApp(engine, {}, { worker: false });
      k = await signup(t);
      doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    });
    after(() => t.teardown());

    test('the document says the shapes: oneOf of exact payment types, a share, patterns, minProperties', () => {
      const schemas = doc.components.schemas;
      const variants = schemas.CreatePaymentRequest.oneOf.map((s: Json) => s.$ref.replace('#/components/schemas/', ''));
      assert.deepEqual(variants, ['PixPaymentRequest', 'PixPaymentInCentsRequest', 'CardPaymentRequest', 'CardPaymentWithAmountRequest']);
      for (const name of variants) {
        const s = schemas[name];
        assert.equal(s.additionalProperties, false, name);
        const amount = 'amount' in s.properties ? 'amount' : 'amountInCents';
        const other = amount === 'amount' ? 'amountInCents' : 'amount';
        assert.ok(!(other in s.properties), `${name}: one amount field`);
        assert.ok(s.required.includes(amount) && s.required.includes('method'), name);
        const card = s.properties.method.const === 'credit_card';
        assert.equal(s.properties.method.type, 'string');
        assert.equal(s.required.includes('cardToken'), card, `${name}: cardToken required iff card`);
        assert.equal('cardToken' in s.properties, card, `${name}: cardToken refused for pix`);
        assert.equal('installments' in s.properties, card, `${name}: installments card-only`);
        assert.equal('pixExpiresInSeconds' in s.properties, !card, `${name}: pixExpiresInSeconds pix-only`);
      }
      assert.deepEqual(schemas.SplitShare.oneOf.map((s: Json) => s.$ref), ['#/components/schemas/PercentageSplitShare', '#/components/schemas/AmountSplitShare']);
      const bank = schemas.Recipient.properties.bankAccount;
      const bankAccount = bank.$ref ? schemas[bank.$ref.replace('#/components/schemas/', '')] : bank;
      for (const f of ['bankCode', 'agency', 'account']) assert.ok(bankAccount.properties[f].pattern, `bankAccount.${f} has a pattern`);
      assert.match(schemas.CreateWebhookEndpointRequest.properties.url.pattern, /Hh.*Tt.*Pp/);
      const updates = Object.keys(schemas).filter((n) => /^Update.*Request$/.test(n));
      assert.ok(updates.length >= 4, updates.join(', '));
      // An update is never empty: minProperties, unless a field is required anyway.
      for (const name of updates) assert.ok(schemas[name].minProperties === 1 || schemas[name].required?.length > 0, `${name} has minProperties: 1`);
      for (const name of ['UpdateRecipientRequest', 'UpdateSplitRuleRequest', 'UpdateAccountSettingsRequest', 'UpdateWebhookEndpointRequest']) assert.equal(schemas[name].minProperties, 1, name);
    });

    test('payments: a body that matches no shape gets one clear message naming the field', async () => {
      const cases: Array<[unknown, string, string]> = [
        [{ amount: -1, method: 'pix' }, 'amount', 'amount must be a positive integer.'],
        [{ amount: '10', method: 'pix' }, 'amount', 'amount must be a positive integer.'],
        [{ method: 'pix' }, 'amount', 'amount is required: a positive integer number of centavos (or amountInCents).'],
        [{ amount: 10, amountInCents: 10, method: 'pix' }, 'amount', 'Send either amount or amountInCents, not both.'],
        [{ amountInCents: 10, method: 'credit_card' }, 'cardToken', 'cardToken is required for credit_card payments.'],
        [{ amount: 10, method: 'pix', cardToken: 'tok_visa' }, 'cardToken', 'cardToken is not accepted for pix payments.'],
        [{ amount: 10, method: 'pix', installments: 2 }, 'installments', 'installments only applies to credit_card payments.'],
        [{ amountInCents: 10, method: 'credit_card', cardToken: 'tok_visa', pixExpiresInSeconds: 60 }, 'pixExpiresInSeconds', 'pixExpiresInSeconds only applies to pix payments.'],
        [{ amount: 10, method: 'boleto' }, 'method', 'method must be one of: pix, credit_card.'],
        [{ amount: 10, method: 'pix', currency: 'USD' }, 'currency', 'currency must be BRL.'],
        [{ amount: 10, method: 'pix', colour: 'red' }, 'colour', 'Unknown field: colour.'],
      ];
      for (const [body, param, message] of cases) {
        const res = await pay(body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        const error = res.json().error;
        assert.equal(error.code, 'VALIDATION_ERROR');
        assert.deepEqual({ param: error.param, message: error.message }, { param, message }, JSON.stringify(body));
      }
    });

    test('payments: the server accepts exactly the bodies the published oneOf accepts', async () => {
      const published = documentValidator(doc)('CreatePaymentRequest');
      const field = <T>(values: T[]) => fc.option(fc.constantFrom(...values), { nil: undefined });
      const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
      const valid = fc.record({
        amountField: fc.constantFrom('amount', 'amountInCents'),
        value: fc.constantFrom(1, 1050),
        currency: opt(fc.constant('BRL')),
        card: fc.boolean(),
        installments: opt(fc.constantFrom(1, 12)),
        pixExpiresInSeconds: opt(fc.constantFrom(60, 3600)),
      }).map((v) => ({
        [v.amountField]: v.value,
        method: v.card ? 'credit_card' : 'pix',
        ...(v.currency ? { currency: v.currency } : {}),
        ...(v.card ? { cardToken: 'tok_visa', ...(v.installments ? { installments: v.installments } : {}) } : v.pixExpiresInSeconds ? { pixExpiresInSeconds: v.pixExpiresInSeconds } : {}),
      }));
      const random = fc.record({
        amount: field([1, 1050, 0, -5, '10', 1.5, 1_000_000_001]),
        amountInCents: field([1, 2500, 0, '25']),
        currency: field(['BRL', 'USD']),
        method: field(['pix', 'credit_card', 'boleto']),
        cardToken: field(['tok_visa', 'visa']),
        installments: field([1, 12, 13]),
        pixExpiresInSeconds: field([60, 3600, 59]),
        description: field(['order 1']),
        colour: fc.option(fc.constant('red'), { nil: undefined, freq: 8 }),
      }).map((b) => Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)));
      // One or two changes to a valid body: the boundaries between the shapes.
      const changes: Array<(b: Json) => Json> = [
        (b) => ({ ...b, installments: 2 }),
        (b) => ({ ...b, pixExpiresInSeconds: 120 }),
        (b) => ({ ...b, cardToken: 'tok_visa' }),
        (b) => Object.fromEntries(Object.entries(b).filter(([f]) => f !== 'cardToken')),
        (b) => ({ ...b, amount: 10, amountInCents: 10 }),
        (b) => Object.fromEntries(Object.entries(b).filter(([f]) => f !== 'amount' && f !== 'amountInCents')),
        (b) => ({ ...b, method: b.method === 'pix' ? 'credit_card' : 'pix' }),
        (b) => ({ ...b, currency: 'USD' }),
        (b) => ({ ...b, installments: 13 }),
        (b) => ({ ...b, colour: 'red' }),
      ];
      const changed = fc.tuple(valid, fc.array(fc.integer({ min: 0, max: changes.length - 1 }), { minLength: 1, maxLength: 2 }))
        .map(([b, picks]) => picks.reduce((acc: Json, i) => changes[i](acc), b as Json));
      const body = fc.oneof(valid, changed, random);
      let accepted = 0;
      await fc.assert(fc.asyncProperty(body, async (b) => {
        const res = await pay(b);
        const valid = published(b);
        if (valid) accepted++;
        assert.equal(res.statusCode, valid ? 200 : 400, `${JSON.stringify(b)}: ${res.body.slice(0, 300)}`);
        if (!valid) assert.ok(res.json().error.message.length < 200, 'one clear message');
      }), { numRuns: 300, seed: 20261123 });
      assert.ok(accepted > 10, `only ${accepted} valid bodies generated`);
    });

    test('split shares: the oneOf and the rule in code agree', () => {
      const published = documentValidator(doc)('SplitShareRequest');
      const loose = new Ajv2020({ strict: false }).compile(JSON.parse(JSON.stringify(LooseSplitShare)));
      const share = fc.record({
        recipientId: fc.option(fc.constantFrom('rcp_1', ''), { nil: undefined }),
        percentage: fc.option(fc.constantFrom(10, 0, 100, 100.5, '5'), { nil: undefined }),
        amount: fc.option(fc.constantFrom(500, 0, 1.5), { nil: undefined }),
        extra: fc.option(fc.constant(1), { nil: undefined, freq: 8 }),
      }).map((b) => Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)));
      fc.assert(fc.property(share, (s) => {
        let ruleOk = true;
        try {
          checkShares({ splits: [s as never] });
        } catch {
          ruleOk = false;
        }
        assert.equal(published(s), loose(s) && ruleOk, JSON.stringify(s));
      }), { numRuns: 500, seed: 20261123 });
    });

    test('split rules, bank accounts, webhook urls and updates keep their clear messages', async () => {
      const email = `shapes-${engine}-${process.pid}@example.com`;
      await createAdminUser(t.store, email, 'a long enough passphrase');
      const login = await t.app.inject({ method: 'POST', url: '/admin/session', payload: { email, password: 'a long enough passphrase' } });
      const admin = { cookie: (login.headers['set-cookie'] as string).split(';')[0], 'x-csrf-token': login.json().csrfToken };
      const refused = async (method: 'POST' | 'PATCH', url: string, payload: unknown, headers: Record<string, string>) => {
        const res = await t.app.inject({ method, url, headers, payload: payload as object });
        assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(payload)}: ${res.body}`);
        return res.json().error as { param?: string; message: string };
      };
      const both = await refused('POST', '/admin/split-rules', { accountId: k.accountId, priority: 1, splits: [{ recipientId: 'rcp_x', percentage: 10, amount: 500 }] }, admin);
      assert.deepEqual(both, { ...both, param: 'splits[0]', message: 'splits[0] must have exactly one of percentage or amount.' });
      const neither = await refused('POST', '/admin/split-rules', { accountId: k.accountId, priority: 1, splits: [{ recipientId: 'rcp_x', amount: 500 }, { recipientId: 'rcp_y' }] }, admin);
      assert.deepEqual(neither, { ...neither, param: 'splits[1]', message: 'splits[1] must have exactly one of percentage or amount.' });
      const typed = await refused('POST', '/admin/split-rules', { accountId: k.accountId, priority: 1, splits: [{ recipientId: 'rcp_x', percentage: '10' }] }, admin);
      assert.equal(typed.param, 'splits[0].percentage');
      const emptyRule = await refused('PATCH', '/admin/split-rules/spr_x', {}, admin);
      assert.equal(emptyRule.message, 'Send at least one of priority, conditions, splits, active, description.');

      const key = auth(k.secretKey);
      const bank = { bankCode: '341', agency: '0001', account: '12345-6', accountType: 'checking' };
      const recipient = (bankAccount: unknown) => ({ name: 'Loja', document: '11.222.333/0001-81', bankAccount });
      for (const [f, value, message] of [
        ['bankCode', '34a', 'bankAccount.bankCode must be exactly 3 digits.'],
        ['agency', '00a1', 'bankAccount.agency must be 1-5 digits, optionally followed by "-" and a check digit (0-9 or X).'],
        ['account', '12345-Y', 'bankAccount.account must be 1-20 digits, "-" and a check digit (0-9 or X).'],
      ] as const) {
        const err = await refused('POST', '/v1/recipients', recipient({ ...bank, [f]: value }), key);
        assert.deepEqual({ param: err.param, message: err.message }, { param: `bankAccount.${f}`, message });
        assert.ok(!err.message.includes(value), 'the value is not echoed');
      }
      const emptyUpdate = await refused('PATCH', '/v1/recipients/rcp_x', {}, key);
      assert.equal(emptyUpdate.message, 'Send at least one of name, bankAccount, pixKey, metadata.');
      const ftp = await refused('POST', '/v1/webhook-endpoints', { url: 'ftp://example.com/hooks', events: ['*'] }, key);
      assert.deepEqual({ param: ftp.param, message: ftp.message }, { param: 'url', message: 'url must be an absolute http(s) URL.' });
      const noEndpointChange = await refused('PATCH', '/v1/webhook-endpoints/whe_x', {}, key);
      assert.match(noEndpointChange.message, /^Send at least one of url, events, enabled, description\.$/);
    });
  });
}
