import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startApp, signup, auth, type TestApp, type Keys } from './helpers.js';

const BANK = { bankCode: '341', agency: '0001', account: '12345-6', accountType: 'checking' };
const NUMERIC_CNPJ = '11.222.333/0001-81';
const ALPHA_CNPJ = '12.ABC.345/01DE-35';

for (const engine of ENGINES) {
  describe(`recipients (${engine})`, () => {
    let t: TestApp;
    let k: Keys;
    before(async () => {
      t = await startApp(engine);
      k = await signup(t);
    });
    after(() => t.teardown());

    const valid = (overrides: Record<string, unknown> = {}) => ({ name: 'Loja Exemplo Ltda', document: NUMERIC_CNPJ, bankAccount: { ...BANK }, ...overrides });
    const create = (body: unknown, headers: Record<string, string> = {}, key = k.secretKey) =>
      t.app.inject({ method: 'POST', url: '/v1/recipients', headers: auth(key, headers), payload: body as object });
    const get = (id: string, key = k.secretKey) => t.app.inject({ method: 'GET', url: `/v1/recipients/${id}`, headers: auth(key) });
    const patch = (id: string, body: unknown, headers: Record<string, string> = {}, key = k.secretKey) =>
      t.app.inject({ method: 'PATCH', url: `/v1/recipients/${id}`, headers: auth(key, headers), payload: body as object });
    const list = (q: string, key = k.secretKey) => t.app.inject({ method: 'GET', url: `/v1/recipients${q}`, headers: auth(key) });
    const count = async () => Number((await t.store.db.selectFrom('recipients').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const eventsOf = (id: string) => t.store.db.selectFrom('events').select(['type', 'data', 'account_id', 'livemode']).where('data', 'like', `%${id}%`).orderBy('id').execute();

    // Sends `body`, expects a 400 VALIDATION_ERROR naming `param`, and that nothing was stored.
    async function refused(body: unknown, param: string, secrets: string[] = []) {
      const before = await count();
      const res = await create(body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      const err = res.json().error;
      assert.equal(err.code, 'VALIDATION_ERROR', JSON.stringify(body));
      assert.equal(err.param, param, `${JSON.stringify(body)}: ${err.message}`);
      assert.equal(err.correlationId, res.headers['x-correlation-id']);
      for (const secret of secrets) assert.ok(!res.body.includes(secret), `the error must not echo ${secret}`);
      assert.equal(await count(), before, 'a refused request creates nothing');
      return err as { message: string; details?: unknown };
    }

    test('create with a numeric CNPJ: punctuation stripped, full resource returned and fetchable', async () => {
      const res = await create(valid({ metadata: { sellerId: '42' } }));
      assert.equal(res.statusCode, 200, res.body);
      const r = res.json();
      assert.match(r.id, /^rcp_[0-9a-z]{26}$/);
      assert.equal(r.object, 'recipient');
      assert.equal(r.name, 'Loja Exemplo Ltda');
      assert.equal(r.document, '11222333000181');
      assert.deepEqual(r.bankAccount, BANK);
      assert.deepEqual(r.metadata, { sellerId: '42' });
      assert.equal(r.livemode, false);
      assert.equal(r.createdAt, r.updatedAt);
      assert.ok(!Number.isNaN(Date.parse(r.createdAt)));
      const fetched = await get(r.id);
      assert.equal(fetched.statusCode, 200);
      assert.deepEqual(fetched.json(), r);
      const row = await t.store.db.selectFrom('recipients').selectAll().where('id', '=', r.id).executeTakeFirstOrThrow();
      assert.equal(row.account_id, k.accountId);
      assert.equal(row.document, '11222333000181');
    });

    test('create with an alphanumeric CNPJ: stored canonical uppercase; lowercase input is uppercased', async () => {
      const r = (await create(valid({ document: ALPHA_CNPJ }))).json();
      assert.equal(r.document, '12ABC34501DE35');
      const lower = await create(valid({ document: '12abc34501de35' }));
      assert.equal(lower.statusCode, 200);
      assert.equal(lower.json().document, '12ABC34501DE35');
      const noMeta = (await create(valid({ document: '12ABC34501DE35' }))).json();
      assert.deepEqual(noMeta.metadata, {});
    });

    test('check digit X accepted in the account and the agency; lowercase x normalized to X', async () => {
      const upper = await create(valid({ bankAccount: { ...BANK, account: '98765-X' } }));
      assert.equal(upper.statusCode, 200, upper.body);
      assert.equal(upper.json().bankAccount.account, '98765-X');
      const lower = await create(valid({ bankAccount: { bankCode: '001', agency: '1234-x', account: '98765-x', accountType: 'savings' } }));
      assert.equal(lower.statusCode, 200, lower.body);
      assert.deepEqual(lower.json().bankAccount, { bankCode: '001', agency: '1234-X', account: '98765-X', accountType: 'savings' });
      const payment = await create(valid({ bankAccount: { ...BANK, accountType: 'payment' } }));
      assert.equal(payment.json().bankAccount.accountType, 'payment');
    });

    test('document: a wrong check digit is refused without echoing the number', async () => {
      const err = await refused(valid({ document: '11.222.333/0001-82' }), 'document', ['11222333000182', '11.222.333/0001-82']);
      assert.match(err.message, /check digits/);
      await refused(valid({ document: '12.ABC.345/01DE-36' }), 'document', ['12ABC34501DE36']);
    });

    test('document: wrong length is refused (schema and after stripping punctuation)', async () => {
      await refused(valid({ document: '1122233300018' }), 'document'); // 13 characters
      await refused(valid({ document: '112223330001811' }), 'document'); // 15 characters
      const err = await refused(valid({ document: '11.222.333/0001-8' }), 'document'); // 13 after stripping
      assert.match(err.message, /14 characters/);
      await refused(valid({ document: '' }), 'document');
    });

    test('document: letters in the check digits, other characters and all-same sequences are refused', async () => {
      const err = await refused(valid({ document: '12ABC34501DE3A' }), 'document', ['12ABC34501DE3A']);
      assert.match(err.message, /check digits/);
      await refused(valid({ document: '11_222_333_0001' }), 'document');
      await refused(valid({ document: '00000000000000' }), 'document');
      await refused(valid({ document: 11222333000181 }), 'document');
    });

    test('bankAccount.bankCode must be exactly 3 digits', async () => {
      await refused(valid({ bankAccount: { ...BANK, bankCode: '34' } }), 'bankAccount.bankCode');
      await refused(valid({ bankAccount: { ...BANK, bankCode: '3411' } }), 'bankAccount.bankCode');
      const err = await refused(valid({ bankAccount: { ...BANK, bankCode: '34a' } }), 'bankAccount.bankCode');
      assert.match(err.message, /3 digits/);
      await refused(valid({ bankAccount: { ...BANK, bankCode: 341 } }), 'bankAccount.bankCode');
    });

    test('bankAccount.agency must be digits', async () => {
      await refused(valid({ bankAccount: { ...BANK, agency: '00a1' } }), 'bankAccount.agency');
      await refused(valid({ bankAccount: { ...BANK, agency: '' } }), 'bankAccount.agency');
      await refused(valid({ bankAccount: { ...BANK, agency: '123456' } }), 'bankAccount.agency');
    });

    test('bankAccount.account needs digits, a hyphen and a check digit; never echoed', async () => {
      await refused(valid({ bankAccount: { ...BANK, account: '123456' } }), 'bankAccount.account', ['123456']);
      await refused(valid({ bankAccount: { ...BANK, account: '12345-' } }), 'bankAccount.account', ['12345-']);
      await refused(valid({ bankAccount: { ...BANK, account: '12345-Y' } }), 'bankAccount.account', ['12345-Y']);
      await refused(valid({ bankAccount: { ...BANK, account: '12a45-6' } }), 'bankAccount.account', ['12a45-6']);
    });

    test('bankAccount.accountType must be checking, savings or payment', async () => {
      await refused(valid({ bankAccount: { ...BANK, accountType: 'investment' } }), 'bankAccount.accountType');
      await refused(valid({ bankAccount: { ...BANK, accountType: 'Checking' } }), 'bankAccount.accountType');
    });

    test('bankAccount: missing, missing fields and unknown fields', async () => {
      const { bankAccount: _omit, ...noBank } = valid();
      await refused(noBank, 'bankAccount');
      const { accountType: _t, ...partial } = BANK;
      await refused(valid({ bankAccount: partial }), 'bankAccount.accountType');
      await refused(valid({ bankAccount: { ...BANK, branch: '1' } }), 'bankAccount.branch');
    });

    test('name is required, not blank and at most 200 characters', async () => {
      const { name: _omit, ...noName } = valid();
      await refused(noName, 'name');
      await refused(valid({ name: '' }), 'name');
      await refused(valid({ name: '   ' }), 'name');
      await refused(valid({ name: 'x'.repeat(201) }), 'name');
      const longest = await create(valid({ name: 'x'.repeat(200) }));
      assert.equal(longest.statusCode, 200);
    });

    test('unknown fields and bad metadata are refused', async () => {
      await refused(valid({ email: 'a@b.com' }), 'email');
      await refused(valid({ metadata: { a: 1 } }), 'metadata.a');
      await refused(valid({ metadata: { ['k'.repeat(41)]: 'v' } }), 'metadata');
      await refused(valid({ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }), 'metadata');
      await refused(valid({ metadata: { a: 'v'.repeat(501) } }), 'metadata.a');
    });

    test('list: newest first, cursors both ways, filters, bad queries', async () => {
      const other = await signup(t, 'List merchant');
      const docs = [NUMERIC_CNPJ, ALPHA_CNPJ];
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const res = await create(valid({ name: i % 3 === 0 ? 'Alpha Ltda' : `Seller ${i}`, document: docs[i % 2] }), {}, other.secretKey);
        ids.push(res.json().id);
      }
      const l = (q: string) => list(q, other.secretKey);
      const first = (await l('?limit=3')).json();
      assert.equal(first.object, 'list');
      assert.deepEqual(first.data.map((r: { id: string }) => r.id), [ids[6], ids[5], ids[4]]);
      assert.equal(first.hasMore, true);
      const second = (await l(`?limit=3&startingAfter=${ids[4]}`)).json();
      assert.deepEqual(second.data.map((r: { id: string }) => r.id), [ids[3], ids[2], ids[1]]);
      const third = (await l(`?limit=3&startingAfter=${ids[1]}`)).json();
      assert.deepEqual(third.data.map((r: { id: string }) => r.id), [ids[0]]);
      assert.equal(third.hasMore, false);
      const back = (await l(`?limit=2&endingBefore=${ids[2]}`)).json();
      assert.deepEqual(back.data.map((r: { id: string }) => r.id), [ids[4], ids[3]]);
      assert.equal(back.hasMore, true);

      // document: exact after normalization, whichever punctuation the filter is written with.
      const alpha = (await l(`?document=${encodeURIComponent('12abc34501de35')}`)).json();
      assert.deepEqual(alpha.data.map((r: { id: string }) => r.id), [ids[5], ids[3], ids[1]]);
      const numeric = (await l(`?document=${encodeURIComponent(NUMERIC_CNPJ)}`)).json();
      assert.deepEqual(numeric.data.map((r: { id: string }) => r.id), [ids[6], ids[4], ids[2], ids[0]]);
      const unknownDoc = (await l('?document=11444777000161')).json();
      assert.deepEqual(unknownDoc.data, []);
      // name: exact (case-sensitive) match, not a prefix.
      const byName = (await l(`?name=${encodeURIComponent('Alpha Ltda')}`)).json();
      assert.deepEqual(byName.data.map((r: { id: string }) => r.id), [ids[6], ids[3], ids[0]]);
      assert.deepEqual((await l('?name=Alpha')).json().data, []);
      assert.deepEqual((await l(`?name=${encodeURIComponent('alpha ltda')}`)).json().data, []);
      const both = (await l(`?name=${encodeURIComponent('Alpha Ltda')}&document=11222333000181`)).json();
      assert.deepEqual(both.data.map((r: { id: string }) => r.id), [ids[6], ids[0]]);

      const future = (await l(`?createdGte=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).json();
      assert.deepEqual(future.data, []);
      const past = (await l(`?createdLte=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}&limit=100`)).json();
      assert.equal(past.data.length, 7);

      const bad: Array<[string, string]> = [
        ['?limit=0', 'limit'], ['?limit=101', 'limit'], ['?document=11222333000182', 'document'], ['?document=123', 'document'],
        ['?name=', 'name'], ['?createdGte=yesterday', 'createdGte'], ['?unknown=1', 'unknown'],
      ];
      for (const [q, param] of bad) {
        const res = await l(q);
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().error.code, 'VALIDATION_ERROR', q);
        assert.equal(res.json().error.param, param, q);
      }
    });

    test('PATCH name, bankAccount and metadata; each change writes recipient.updated', async () => {
      const r = (await create(valid({ metadata: { a: '1', b: '2' } }))).json();
      const renamed = await patch(r.id, { name: 'Novo Nome SA' });
      assert.equal(renamed.statusCode, 200, renamed.body);
      const n = renamed.json();
      assert.equal(n.name, 'Novo Nome SA');
      assert.equal(n.document, r.document);
      assert.deepEqual(n.bankAccount, r.bankAccount);
      assert.deepEqual(n.metadata, { a: '1', b: '2' });
      assert.equal(n.createdAt, r.createdAt);
      assert.ok(n.updatedAt >= r.updatedAt);

      const newBank = { bankCode: '260', agency: '0001', account: '1234567-x', accountType: 'payment' };
      const rebanked = (await patch(r.id, { bankAccount: newBank })).json();
      assert.deepEqual(rebanked.bankAccount, { ...newBank, account: '1234567-X' });
      assert.equal(rebanked.name, 'Novo Nome SA');

      const meta = (await patch(r.id, { metadata: { c: '3' } })).json();
      assert.deepEqual(meta.metadata, { c: '3' }, 'metadata is replaced whole, not merged');
      const cleared = (await patch(r.id, { metadata: {} })).json();
      assert.deepEqual(cleared.metadata, {});

      const fetched = (await get(r.id)).json();
      assert.deepEqual(fetched, cleared);

      // Changing nothing answers the recipient as it is and writes no event.
      const same = await patch(r.id, { name: 'Novo Nome SA', metadata: {} });
      assert.equal(same.statusCode, 200);
      assert.deepEqual(same.json(), cleared);

      const events = await eventsOf(r.id);
      assert.deepEqual(events.map((e) => e.type), ['recipient.created', 'recipient.updated', 'recipient.updated', 'recipient.updated', 'recipient.updated']);
      assert.equal(JSON.parse(events[0].data).object.document, '11222333000181');
      assert.equal(JSON.parse(events[1].data).object.name, 'Novo Nome SA');
      assert.deepEqual(JSON.parse(events[2].data).object.bankAccount.bankCode, '260');
      for (const e of events) {
        assert.equal(e.account_id, k.accountId);
        assert.equal(e.livemode, 0);
      }
    });

    test('an invalid PATCH changes nothing and writes no event', async () => {
      const r = (await create(valid())).json();
      const cases: Array<[unknown, string | undefined]> = [
        [{ document: '11444777000161' }, 'document'],
        [{ name: '' }, 'name'],
        [{ name: '  ' }, 'name'],
        [{ bankAccount: { ...BANK, account: '999' } }, 'bankAccount.account'],
        [{ bankAccount: { ...BANK, agency: 'abc' } }, 'bankAccount.agency'],
        [{ bankAccount: { bankCode: '001' } }, 'bankAccount.agency'],
        [{ name: 'Ok', bankAccount: { ...BANK, bankCode: '1x1' } }, 'bankAccount.bankCode'],
        [{ metadata: { a: 2 } }, 'metadata.a'],
        [{ metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata'],
        [{ id: 'rcp_x' }, 'id'],
        [{}, undefined],
      ];
      for (const [body, param] of cases) {
        const res = await patch(r.id, body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.equal(res.json().error.code, 'VALIDATION_ERROR', JSON.stringify(body));
        assert.equal(res.json().error.param, param, JSON.stringify(body));
      }
      assert.deepEqual((await get(r.id)).json(), r);
      assert.deepEqual((await eventsOf(r.id)).map((e) => e.type), ['recipient.created']);
      const missing = await patch('rcp_01jc6v8x2a9m3yq0d7b4e5f6g8', { name: 'x' });
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.json().error.code, 'NOT_FOUND');
    });

    test('isolation: another account or the other mode sees 404 and an empty list', async () => {
      const r = (await create(valid())).json();
      const other = await signup(t, 'Other merchant');
      const res = await get(r.id, other.secretKey);
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error.code, 'NOT_FOUND');
      const p = await patch(r.id, { name: 'Hijacked' }, {}, other.secretKey);
      assert.equal(p.statusCode, 404);
      assert.equal((await get(r.id)).json().name, r.name);
      assert.deepEqual((await list('', other.secretKey)).json().data, []);
      assert.equal((await get('rcp_nope')).statusCode, 404);
      assert.equal((await get('pay_01jc6v8x2a9m3yq0d7b4e5f6g8')).statusCode, 404);

      const mine = (await list('?limit=100')).json().data.map((x: { id: string }) => x.id);
      assert.ok(mine.includes(r.id));
      const theirs = (await create(valid({ name: 'Theirs' }), {}, other.secretKey)).json();
      assert.ok(!(await list('?limit=100')).json().data.some((x: { id: string }) => x.id === theirs.id));

      const { activateLive, createKey } = await import('../src/modules/accounts/service.js');
      const live = await createKey(t.store, k.accountId, 'secret', true);
      await activateLive(t.store, k.accountId);
      t.keyCache.clear();
      assert.equal((await get(r.id, live.key)).statusCode, 404, 'live key does not see a sandbox recipient');
      const liveRecipient = await create(valid(), {}, live.key);
      assert.equal(liveRecipient.statusCode, 200);
      assert.equal(liveRecipient.json().livemode, true);
      assert.equal((await get(liveRecipient.json().id)).statusCode, 404, 'test key does not see a live recipient');
      assert.deepEqual((await list('', live.key)).json().data.map((x: { id: string }) => x.id), [liveRecipient.json().id]);
      const pub = await get(r.id, k.publishableKey);
      assert.equal(pub.statusCode, 403);
    });

    test('idempotent create: same key replays byte for byte; another body with it is refused', async () => {
      const key = `rcp-idem-${engine}-${Date.now()}`;
      const body = valid({ name: 'Idempotente Ltda' });
      const first = await create(body, { 'idempotency-key': key });
      assert.equal(first.statusCode, 200);
      const before = await count();
      const second = await create(body, { 'idempotency-key': key });
      assert.equal(second.statusCode, 200);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.body, first.body);
      assert.equal(await count(), before, 'no second recipient');
      const reused = await create(valid({ name: 'Outro Nome' }), { 'idempotency-key': key });
      assert.equal(reused.statusCode, 422);
      assert.equal(reused.json().error.code, 'IDEMPOTENCY_KEY_REUSED');
      const events = await eventsOf(first.json().id);
      assert.deepEqual(events.map((e) => e.type), ['recipient.created']);

      // A refused (400) request is not stored: the corrected retry with the same key goes through.
      const key2 = `${key}-2`;
      const bad = await create(valid({ document: '11222333000182' }), { 'idempotency-key': key2 });
      assert.equal(bad.statusCode, 400);
      const fixed = await create(valid(), { 'idempotency-key': key2 });
      assert.equal(fixed.statusCode, 200);

      // PATCH is idempotent too.
      const key3 = `${key}-3`;
      const p1 = await patch(first.json().id, { name: 'Renomeada' }, { 'idempotency-key': key3 });
      const p2 = await patch(first.json().id, { name: 'Renomeada' }, { 'idempotency-key': key3 });
      assert.equal(p2.headers['idempotent-replayed'], 'true');
      assert.equal(p2.body, p1.body);
    });

    test('the OpenAPI document names the recipient schemas and operations', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      for (const name of ['Recipient', 'RecipientList', 'CreateRecipientRequest', 'UpdateRecipientRequest']) {
        assert.ok(doc.components.schemas[name], name);
      }
      const ops = [doc.paths['/v1/recipients'].post, doc.paths['/v1/recipients'].get, doc.paths['/v1/recipients/{id}'].get, doc.paths['/v1/recipients/{id}'].patch];
      assert.deepEqual(ops.map((o: { operationId: string }) => o.operationId), ['createRecipient', 'listRecipients', 'getRecipient', 'updateRecipient']);
      for (const o of ops) assert.deepEqual(o.tags, ['Recipients']);
    });
  });
}
