import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startApp, signup, auth, drain, adminSession, type TestApp, type Keys } from './helpers.js';
import { csvCell, reais } from '../src/modules/admin/shared/csv.js';
import { parseReais } from '../src/modules/admin/search/service.js';

// Find anything (GET /admin/search), the payments and settlements filters, and their CSV
// exports: streamed across pages, with centavos exact.

// RFC 4180 lines to cells (enough for what the exports write).
function parseCsv(text: string): string[][] {
  assert.ok(text.endsWith('\r\n'));
  return text.slice(0, -2).split('\r\n').map((line) => {
    const cells: string[] = [];
    for (let i = 0; i <= line.length;) {
      if (line[i] === '"') {
        let j = i + 1, v = '';
        for (;;) {
          if (line[j] === '"' && line[j + 1] === '"') { v += '"'; j += 2; } else if (line[j] === '"') break; else v += line[j++];
        }
        cells.push(v); i = j + 2;
      } else {
        const j = line.indexOf(',', i) === -1 ? line.length : line.indexOf(',', i);
        cells.push(line.slice(i, j)); i = j + 1;
      }
    }
    return cells;
  });
}

test('reais and CSV cells: exact decimals, quoting, no formulas', () => {
  assert.equal(reais(12345), '123.45');
  assert.equal(reais(5), '0.05');
  assert.equal(reais(-300), '-3.00');
  assert.equal(reais(900_719_925_474_099), '9007199254740.99');
  assert.equal(csvCell('a,b'), '"a,b"');
  assert.equal(csvCell('say "hi"'), '"say ""hi"""');
  assert.equal(csvCell('=SUM(A1)'), "'=SUM(A1)");
  assert.equal(parseReais('1.234,56'), 123456);
  assert.equal(parseReais('100'), 10000);
  assert.equal(parseReais('100,5'), 10050);
  assert.equal(parseReais('R$ 0,07'), 7);
  assert.equal(parseReais('12.5'), null);
});

for (const engine of ENGINES) {
  describe(`admin search, filters and CSV (${engine})`, () => {
    let t: TestApp;
    let admin: { cookie: string; csrf: string };
    let k: Keys;
    let card: { id: string };
    let recipientId: string;
    let settlementId: string;
    let runId: string;

    const get = async (url: string) => {
      const res = await t.app.inject({ method: 'GET', url, headers: { cookie: admin.cookie } });
      return { status: res.statusCode, body: String(res.headers['content-type'] ?? '').startsWith('application/json') ? res.json() : res.body, headers: res.headers };
    };
    const call = async (method: 'POST' | 'PATCH', url: string, payload: object) => {
      const res = await t.app.inject({ method, url, headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf }, payload });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const api = async (url: string, payload?: object) => {
      const res = await t.app.inject({ method: payload ? 'POST' : 'GET', url, headers: auth(k.secretKey), ...(payload ? { payload } : {}) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const search = async (q: string) => {
      const r = await get(`/admin/search?q=${encodeURIComponent(q)}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body as { interpretedAs: string; data: Array<{ type: string; id: string; accountName: string | null; label: string; parentId: string | null; amount: number | null }> };
    };

    before(async () => {
      t = await startApp(engine, {}, { worker: false });
      admin = await adminSession(t);
      k = await signup(t, 'Loja Busca Fina');
      recipientId = (await api('/v1/recipients', { name: 'Vendedor Busca', document: '11.222.333/0001-81', bankAccount: { bankCode: '341', agency: '1234', account: '12345-6', accountType: 'checking' } })).id;
      card = await api('/v1/payments', { amountInCents: 12345, method: 'credit_card', cardToken: 'tok_visa', customer: { name: 'Ana', email: 'Ana.Compradora@Example.com' } });
      await drain(t);
      assert.equal((await api(`/v1/payments/${card.id}`)).status, 'approved');
      await api('/v1/payments', { amountInCents: 500, method: 'credit_card', cardToken: 'tok_declined' });
      await call('PATCH', `/admin/accounts/${k.accountId}/settings`, { settlementDelayDays: { pix: 0 } });
      const pix = await api('/v1/payments', { amount: 1001, currency: 'BRL', method: 'pix' });
      await api(`/v1/sandbox/payments/${pix.id}/pay`, {});
      runId = (await call('POST', '/admin/settlement-runs', { reason: 'search test' })).id;
      await drain(t);
      assert.equal((await get(`/admin/settlement-runs/${runId}`)).body.status, 'completed');
      settlementId = (await get(`/admin/settlements?runId=${runId}`)).body.data[0].id;
    });
    after(async () => t?.teardown());

    test('one box finds ids of any kind, a CNPJ, an e-mail, last four digits with an amount, a name', async () => {
      const byId = await search(card.id);
      assert.equal(byId.interpretedAs, 'id');
      assert.deepEqual(byId.data.map((r) => [r.type, r.id, r.accountName, r.amount]), [['payment', card.id, 'Loja Busca Fina', 12345]]);
      assert.match(byId.data[0].label, /4242/);
      assert.deepEqual((await search(recipientId)).data.map((r) => [r.type, r.label]), [['recipient', 'Vendedor Busca · 11.***.***/****-81']]);
      const stl = (await search(settlementId)).data[0];
      assert.deepEqual([stl.type, stl.parentId], ['settlement', runId]);
      assert.equal((await search(runId)).data[0].type, 'settlement_run');
      assert.equal((await search(k.accountId)).data[0].accountName, 'Loja Busca Fina');
      assert.deepEqual((await search('pay_00000000000000000000000000')).data, []);
      const doc = await search('11222333000181');
      assert.equal(doc.interpretedAs, 'document');
      assert.deepEqual(doc.data.map((r) => r.id), [recipientId]);
      const email = await search('ana.compradora@example.COM');
      assert.equal(email.interpretedAs, 'email');
      assert.deepEqual(email.data.map((r) => r.id), [card.id]);
      const last4 = await search('4242 123,45');
      assert.equal(last4.interpretedAs, 'card');
      assert.deepEqual(last4.data.map((r) => r.id), [card.id]);
      assert.deepEqual((await search('4242 123,46')).data, []);
      assert.deepEqual((await search('busca fina')).data.map((r) => r.id), [k.accountId]);
      assert.deepEqual((await search('busca_fina')).data, [], '_ is not a wildcard');
      const bad = await get('/admin/search?q=');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, 'VALIDATION_ERROR');
    });

    test('the session status answers "not signed in" with a 200, and the session when signed in', async () => {
      const anonymous = await t.app.inject({ method: 'GET', url: '/admin/session/status' });
      assert.equal(anonymous.statusCode, 200);
      assert.deepEqual(anonymous.json(), { object: 'admin_session_status', livemode: false, signedIn: false, session: null });
      const stale = await t.app.inject({ method: 'GET', url: '/admin/session/status', headers: { cookie: 'admin_session=nope' } });
      assert.deepEqual(stale.json(), { object: 'admin_session_status', livemode: false, signedIn: false, session: null });
      const signed = (await get('/admin/session/status')).body;
      assert.equal(signed.signedIn, true);
      assert.equal(signed.session.csrfToken, admin.csrf);
      // The session itself still answers 401 without one.
      assert.equal((await t.app.inject({ method: 'GET', url: '/admin/session' })).statusCode, 401);
    });

    test('payments filtered by method and amount; settlements by status, run, date and amount', async () => {
      const list = async (q: string) => (await get(`/admin/payments?accountId=${k.accountId}${q}`)).body.data.map((p: { id: string }) => p.id);
      assert.deepEqual(await list('&method=credit_card&amountGte=1000'), [card.id]);
      assert.equal((await list('&amountLte=1001')).length, 2);
      assert.equal((await list('&method=pix&amountGte=1002')).length, 0);
      const held = (await get(`/admin/settlements?accountId=${k.accountId}&status=held`)).body.data;
      assert.equal(held.length, 1);
      assert.equal(held[0].payee.type, 'merchant');
      const today = held[0].settlementDate;
      assert.equal((await get(`/admin/settlements?dateGte=${today}&dateLte=${today}&accountId=${k.accountId}`)).body.data.length, 1);
      assert.equal((await get(`/admin/settlements?dateLte=2000-01-01&accountId=${k.accountId}`)).body.data.length, 0);
      assert.equal((await get(`/admin/settlements?amountGte=${held[0].amount + 1}&accountId=${k.accountId}`)).body.data.length, 0);
      assert.equal((await get('/admin/settlements?status=nope')).status, 400);
    });

    test('CSV export of what is filtered: streamed across pages, every centavo exact', async () => {
      // 2,345 more payments (more than two export pages), written straight to the store.
      const other = await signup(t, 'Loja Muitas Vendas');
      const rows = Array.from({ length: 2345 }, (_, i) => ({
        id: `pay_0${String(i).padStart(25, '0')}`, account_id: other.accountId, livemode: 0, status: i % 3 === 0 ? 'declined' : 'approved', amount: 1 + ((i * 7919) % 1_000_000),
        currency: 'BRL', method: 'credit_card', amount_refunded: 0, provider_attempts: 1, card_last4: '4242', created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), updated_at: '2026-01-01T00:00:00.000Z',
      }));
      await t.store.write(async (tx) => {
        for (let i = 0; i < rows.length; i += 500) await tx.insertInto('payments').values(rows.slice(i, i + 500)).execute();
      });
      const res = await get(`/admin/payments.csv?accountId=${other.accountId}&status=approved`);
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^text\/csv/);
      assert.match(String(res.headers['content-disposition']), /attachment; filename="pagamentos.csv"/);
      const [header, ...lines] = parseCsv(res.body as string);
      assert.deepEqual(header.slice(0, 8), ['id', 'created_at', 'account_id', 'livemode', 'method', 'status', 'amount_cents', 'amount_brl']);
      const approved = rows.filter((r) => r.status === 'approved');
      assert.equal(lines.length, approved.length);
      assert.deepEqual(lines.map((l) => l[0]), approved.map((r) => r.id).sort().reverse(), 'newest first, each once');
      const cents = lines.reduce((a, l) => a + Number(l[6]), 0);
      assert.equal(cents, approved.reduce((a, r) => a + r.amount, 0));
      for (const l of lines) assert.equal(l[7], reais(Number(l[6])));
      // The date filter applies too; the settlements export says the same as its list.
      const day = await get(`/admin/payments.csv?accountId=${other.accountId}&createdLte=2026-01-01T00:00:09.999Z`);
      assert.equal(parseCsv(day.body as string).length - 1, 10);
      const stl = parseCsv((await get(`/admin/settlements.csv?runId=${runId}`)).body as string);
      const listed = (await get(`/admin/settlements?runId=${runId}&limit=100`)).body.data;
      assert.deepEqual(stl.slice(1).map((l) => [l[0], Number(l[9]), l[10]]), listed.map((s: { id: string; amount: number }) => [s.id, s.amount, reais(s.amount)]));
      assert.equal((await get('/admin/payments.csv?amountGte=-1')).status, 400);
    });
  });
}
