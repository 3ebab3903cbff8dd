// The fake PSP (test/fakes/) is itself tested: it must hold the official contract against the
// connector, or the connector's tests prove nothing. These tests drive it from outside, over
// mutual TLS on loopback, and check: the vendored contract and its patches; requests off the
// contract refused; OAuth2 scopes, expiry on the fake's clock, revocation, certificate binding;
// mutual TLS both ways; callbacks; each fault; both dialects; and that every answer the fake gave
// validated against the contract (`contractViolations` stays empty).
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasError, isDynamicPix, parsePix } from 'pix-utils';
import { ManualClock } from '../src/clock.js';
import { createPki, type Pki } from './fakes/pki.js';
import { startFakePixPsp, dynamicBrCode, toCentavos, fromCentavos, type FakePixPsp } from './fakes/fake-pix-psp.js';
import { accessToken, api, fetchToken, httpsCall, startWebhookReceiver, type WebhookReceiver } from './fakes/psp-client.js';
import { PATCHES, PIX_API_SHA256, loadPixApiContract, loadUpstreamContract, readVendoredContract } from './fakes/pix-api/patches.js';
import { pixApiContract } from './fakes/pix-api/contract.js';

const here = dirname(fileURLToPath(import.meta.url));
const TXID = 'pagamentosTESTE0000000000000001'; // 31 letters and digits
const CPF = '12345678909';

function cobBody(over: Record<string, unknown> = {}, chave?: string): Record<string, unknown> {
  return { calendario: { expiracao: 3600 }, devedor: { cpf: CPF, nome: 'Fulano de Tal' }, valor: { original: '10.50' }, chave, solicitacaoPagador: 'Pedido 123', ...over };
}

function txid(n: number): string {
  return `pagamentosTESTE${String(n).padStart(16, '0')}`;
}

describe('vendored API Pix contract', () => {
  it('is bacen/pix-api 2.9.0 byte for byte (sha256), with its license notice and every patch listed', () => {
    const { sha256, text } = readVendoredContract();
    assert.equal(sha256, PIX_API_SHA256, 'openapi.yaml changed: update PIX_API_SHA256 and NOTICE deliberately');
    assert.match(text, /^ {2}version: "2\.9\.0"$/m);
    assert.match(text, /license:\n\s+name: Apache 2\.0/);
    const notice = readFileSync(join(here, 'fakes/pix-api/NOTICE'), 'utf8');
    assert.match(notice, /Apache License, Version 2\.0/);
    assert.ok(notice.includes(PIX_API_SHA256));
    const { reports } = loadPixApiContract();
    assert.equal(reports.length, PATCHES.length);
    for (const r of reports) {
      assert.ok(notice.includes(r.id), `NOTICE lists patch ${r.id}`);
      assert.ok(r.changed > 0);
    }
  });

  it('each patch fixes what NOTICE says: CPF, anchors, path collision, location without scheme', () => {
    const upstream = loadUpstreamContract() as { components: { schemas: Record<string, { properties: Record<string, { pattern?: string; format?: string }> }> }; paths: Record<string, unknown> };
    assert.equal(upstream.components.schemas.PessoaFisica.properties.cpf.pattern, '/^\\d{11}$/');
    const c = pixApiContract();
    const pf = c.schema('PessoaFisica');
    assert.equal(pf({ cpf: CPF, nome: 'A' }), true, 'a real CPF validates');
    assert.equal(pf({ cpf: '/12345678909/', nome: 'A' }), false);
    assert.equal(pf({ cpf: '123456789012', nome: 'A' }), false, '12 digits');
    const tx = c.schema('TxId');
    assert.equal(tx('a'.repeat(26)), true);
    assert.equal(tx('a'.repeat(40)), false, 'a 40-character txid is refused once anchored');
    assert.equal(tx('a'.repeat(25)), false);
    const pix = c.schema('Pix');
    assert.equal(pix({ endToEndId: 'E99999008202611021500abcdefghijk', txid: 'abc', valor: '1.00', horario: '2026-11-02T15:00:00Z' }), true, 'a received Pix may carry a short txid');
    assert.equal(pix({ endToEndId: 'E99999008202611021500abcdefghijk', valor: 'R$ 1.00', horario: '2026-11-02T15:00:00Z' }), false);
    assert.ok('/cobv/{pixUrlAccessToken}' in upstream.paths);
    assert.equal(c.match('GET', `/cobv/${TXID}`)?.operation.key, 'GET /cobv/{txid}');
    assert.equal(c.operations.filter((o) => o.key.startsWith('GET /cobv/')).length, 1);
    assert.equal(upstream.components.schemas.PayloadLocation.properties.location.format, 'uri');
    assert.equal(c.schema('PayloadLocation')({ id: 1, location: 'pix.example.com/qr/v2/abc', tipoCob: 'cob', criacao: '2026-11-02T15:00:00Z' }), true);
  });
});

describe('the contract as a validator of answers and callbacks', () => {
  // The fake checks its own answers with these; they must be able to say no.
  it('refuses answers and callbacks off the contract', () => {
    const c = pixApiContract();
    const put = c.match('PUT', `/cob/${TXID}`)!.operation;
    const good = {
      calendario: { criacao: '2026-11-02T15:00:00.000Z', expiracao: 3600 },
      txid: TXID,
      revisao: 0,
      loc: { id: 1, txid: TXID, location: 'pix.example.com/qr/v2/abc', tipoCob: 'cob', criacao: '2026-11-02T15:00:00.000Z' },
      location: 'pix.example.com/qr/v2/abc',
      status: 'ATIVA',
      valor: { original: '10.50' },
      chave: 'a-key',
    };
    assert.deepEqual(c.checkAnswer(put, 201, 'application/json', good), []);
    const { txid: _omit, ...noTxid } = good;
    assert.ok(c.checkAnswer(put, 201, 'application/json', noTxid).some((v) => /txid/.test(v.razao)));
    assert.notDeepEqual(c.checkAnswer(put, 201, 'application/json', { ...good, status: 'PAGA' }), []);
    assert.notDeepEqual(c.checkAnswer(put, 201, 'application/json', { ...good, valor: { original: '10.5' } }), []);
    assert.notDeepEqual(c.checkAnswer(put, 200, 'application/json', good), [], 'PUT /cob answers 201, not 200');
    assert.notDeepEqual(c.checkAnswer(put, 201, 'text/plain', good), []);
    assert.notDeepEqual(c.checkAnswer(put, 409, 'application/problem+json', { type: 'x', title: 'x', status: 409 }), [], '409 is not in the contract');
    assert.notDeepEqual(c.checkAnswer(put, 401, 'application/json', { error: 'x' }), [], 'a 401 carries a Problema');
    const del = c.match('DELETE', '/webhook/k')!.operation;
    assert.deepEqual(c.checkAnswer(del, 204, undefined, undefined), []);
    assert.notDeepEqual(c.checkAnswer(del, 204, 'application/json', {}), [], 'no body on a 204');
    assert.deepEqual(c.checkCallback({ pix: [{ endToEndId: 'E99999008202611021500abcdefghijk', txid: TXID, valor: '1.00', horario: '2026-11-02T15:00:00Z' }] }), []);
    assert.notDeepEqual(c.checkCallback({ pix: [{ endToEndId: 'short', valor: '1.00', horario: '2026-11-02T15:00:00Z' }] }), []);
    assert.notDeepEqual(c.checkCallback({ pix: [{ endToEndId: 'E99999008202611021500abcdefghijk', valor: '1.00' }] }), [], 'horario is required');
  });
});

describe('fake PSP, standard dialect', () => {
  let clock: ManualClock;
  let fake: FakePixPsp;
  let receiverPki: Pki;
  let receiver: WebhookReceiver;
  let token: string;

  before(async () => {
    clock = new ManualClock();
    fake = await startFakePixPsp({ clock });
    // The merchant platform's webhook: its own server certificate, trusting the PSP's CA.
    receiverPki = createPki({ caName: 'Merchant platform CA' });
    receiver = await startWebhookReceiver({ serverPair: receiverPki.issueServer('platform'), trust: [fake.pki.ca] });
  });
  after(async () => {
    await receiver.close();
    receiverPki.dispose();
    await fake.close();
  });
  afterEach(() => {
    const violations = fake.contractViolations.splice(0);
    fake.clearFaults();
    assert.deepEqual(violations, [], 'every answer and callback of the fake validates against the contract');
  });

  // The callbacks go to a receiver whose certificate another CA signed: the fake must trust it.
  before(async () => {
    fake.trustForCallbacks(receiverPki.ca);
    token = await accessToken(fake);
    const put = await api(fake, 'PUT', `/webhook/${encodeURIComponent(fake.chaves[0])}`, { token, body: { webhookUrl: receiver.url } });
    assert.equal(put.status, 200, put.text);
  });

  describe('mutual TLS and OAuth2', () => {
    it('refuses a client without a certificate, and one whose certificate another CA signed', async () => {
      await assert.rejects(httpsCall(fake.tokenUrl, { method: 'POST', tls: { ca: fake.pki.ca } }));
      const rogue = createPki({ caName: 'Rogue' });
      try {
        const c = rogue.issueClient('client-default');
        await assert.rejects(httpsCall(fake.tokenUrl, { method: 'POST', tls: { ca: fake.pki.ca, cert: c.cert, key: c.key } }));
      } finally {
        rogue.dispose();
      }
      assert.equal(fake.requests.filter((r) => r.path === '/oauth/token' && r.atMs >= 0).every((r) => r.clientCertFingerprint !== undefined), true);
    });

    it('gives a token for client credentials (Basic auth, form body), with the scopes asked for', async () => {
      const a = await fetchToken(fake, fake.client, { scope: 'cob.read pix.read' });
      assert.equal(a.status, 200, a.text);
      const t = a.json as { access_token: string; token_type: string; expires_in: number; scope: string };
      assert.equal(t.token_type, 'Bearer');
      assert.equal(t.expires_in, 3600);
      assert.equal(t.scope, 'cob.read pix.read');
      const wrong = await fetchToken(fake, { ...fake.client, clientSecret: 'wrong' });
      assert.equal(wrong.status, 401);
      assert.deepEqual(wrong.json, { error: 'invalid_client' });
      const tooMuch = await fetchToken(fake, fake.addClient({ scopes: ['cob.read'] }), { scope: 'cob.write' });
      assert.equal(tooMuch.status, 400);
      assert.deepEqual(tooMuch.json, { error: 'invalid_scope' });
      const json = await httpsCall(fake.tokenUrl, {
        method: 'POST',
        headers: { authorization: 'Basic ' + Buffer.from(`${fake.client.clientId}:${fake.client.clientSecret}`).toString('base64'), 'content-type': 'application/json' },
        body: '{"grant_type":"client_credentials"}',
        tls: fake.client,
      });
      assert.equal(json.status, 400, 'the standard takes a form body, not Efí\'s JSON');
    });

    it('answers 403 AcessoNegado for a missing scope, and 401 without a token', async () => {
      const reader = fake.addClient({ scopes: ['cob.read'] });
      const t = await accessToken(fake, reader);
      const put = await api(fake, 'PUT', `/cob/${txid(900)}`, { token: t, client: reader, body: cobBody({}, fake.chaves[0]) });
      assert.equal(put.status, 403);
      assert.equal(put.headers['content-type'], 'application/problem+json');
      assert.equal((put.json as { type: string }).type, 'https://pix.bcb.gov.br/api/v2/error/AcessoNegado');
      assert.equal(fake.getCob(txid(900)), undefined, 'nothing created');
      const none = await api(fake, 'GET', `/cob/${txid(900)}`);
      assert.equal(none.status, 401);
      assert.match(String(none.headers['www-authenticate']), /invalid_token/);
    });

    it('expires tokens on its clock, honours revocation, and binds a token to its client certificate', async () => {
      const t = await accessToken(fake);
      assert.equal((await api(fake, 'GET', '/webhook', { token: t })).status, 200);
      clock.advance(3599_000);
      assert.equal((await api(fake, 'GET', '/webhook', { token: t })).status, 200, 'valid one second before expiry');
      clock.advance(1_000);
      const expired = await api(fake, 'GET', '/webhook', { token: t });
      assert.equal(expired.status, 401);
      assert.match((expired.json as { detail: string }).detail, /expirado/);

      const t2 = await accessToken(fake);
      assert.equal(fake.revokeTokens(t2), 1);
      const revoked = await api(fake, 'GET', '/webhook', { token: t2 });
      assert.equal(revoked.status, 401);
      assert.match((revoked.json as { detail: string }).detail, /revogado/);

      const other = fake.addClient();
      const t3 = await accessToken(fake);
      const stolen = await api(fake, 'GET', '/webhook', { token: t3, client: other });
      assert.equal(stolen.status, 401, 'a token used over another client certificate is refused');
      token = await accessToken(fake);
    });
  });

  describe('charges (cob)', () => {
    it('creates a charge with PUT /cob/{txid}: 201, contract-valid, with location (no scheme) and a BR Code', async () => {
      const a = await api(fake, 'PUT', `/cob/${TXID}`, { token, body: cobBody({}, fake.chaves[0]) });
      assert.equal(a.status, 201, a.text);
      const cob = a.json as Record<string, unknown> & { loc: { location: string }; location: string; pixCopiaECola: string; calendario: { criacao: string } };
      assert.equal(cob.txid, TXID);
      assert.equal(cob.status, 'ATIVA');
      assert.equal(cob.revisao, 0);
      assert.deepEqual(cob.valor, { original: '10.50' });
      assert.equal(cob.calendario.criacao, new Date(clock.nowMs()).toISOString());
      assert.doesNotMatch(cob.location, /^https?:/);
      assert.equal(cob.pixCopiaECola, dynamicBrCode(cob.location, 'Loja Teste', 'Sao Paulo'));
      assert.ok(cob.pixCopiaECola.includes(`25${String(cob.location.length).padStart(2, '0')}${cob.location}`));
      // An independent decoder reads it as a dynamic BR Code pointing at the location (CRC checked).
      const decoded = parsePix(cob.pixCopiaECola);
      if (hasError(decoded)) assert.fail(`pix-utils rejected the BR Code: ${decoded.message}`);
      assert.ok(isDynamicPix(decoded));
      assert.equal(decoded.url, cob.location);
      // The same PUT again (a retry) answers the same charge, same revision; a different body
      // revises the ATIVA charge (the standard refuses a PUT only on a charge no longer ATIVA).
      const again = await api(fake, 'PUT', `/cob/${TXID}`, { token, body: cobBody({}, fake.chaves[0]) });
      assert.equal(again.status, 201);
      assert.deepEqual(again.json, a.json);
      const get = await api(fake, 'GET', `/cob/${TXID}`, { token });
      assert.equal(get.status, 200);
      assert.deepEqual(get.json, a.json);
      const revised = await api(fake, 'PUT', `/cob/${TXID}`, { token, body: cobBody({ valor: { original: '11.00' } }, fake.chaves[0]) });
      assert.equal(revised.status, 201);
      assert.equal((revised.json as { revisao: number }).revisao, 1);
    });

    it('refuses requests off the contract with 400 and the violations: bad txid, bad CPF, bad amount, unknown key', async () => {
      const cases: [string, string, unknown, string][] = [
        ['a 40-character txid', `/cob/${'a'.repeat(40)}`, cobBody({}, fake.chaves[0]), 'path.txid'],
        ['a 25-character txid', `/cob/${'a'.repeat(25)}`, cobBody({}, fake.chaves[0]), 'path.txid'],
        ['a txid with a dash', `/cob/${'a'.repeat(20)}-${'b'.repeat(10)}`, cobBody({}, fake.chaves[0]), 'path.txid'],
        ['a CPF with 10 digits', `/cob/${txid(1)}`, cobBody({ devedor: { cpf: '1234567890', nome: 'A' } }, fake.chaves[0]), 'body.devedor.cpf'],
        ['an amount with a comma', `/cob/${txid(2)}`, cobBody({ valor: { original: '10,50' } }, fake.chaves[0]), 'body.valor.original'],
        ['an amount as a number', `/cob/${txid(3)}`, cobBody({ valor: { original: 10.5 } }, fake.chaves[0]), 'body.valor.original'],
        ['no chave', `/cob/${txid(4)}`, cobBody({}), 'body'],
        ['a key that is not the receiver\'s', `/cob/${txid(5)}`, cobBody({}, 'someone-else@example.com'), 'cob.chave'],
      ];
      for (const [what, path, body, where] of cases) {
        const a = await api(fake, 'PUT', path, { token, body });
        assert.equal(a.status, 400, `${what}: ${a.text}`);
        const p = a.json as { type: string; violacoes: { propriedade: string }[] };
        assert.equal(p.type, 'https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida', what);
        assert.ok(p.violacoes.some((v) => v.propriedade.startsWith(where)), `${what}: ${JSON.stringify(p.violacoes)}`);
      }
      assert.equal(fake.cobs.size, 1, 'none of them created anything');
      const notJson = await api(fake, 'PUT', `/cob/${txid(6)}`, { token, rawBody: '{"valor":' });
      assert.equal(notJson.status, 400);
    });

    it('revises with PATCH (revisao + 1), removes with REMOVIDA_PELO_USUARIO_RECEBEDOR, and POST /cob makes a txid', async () => {
      const t = txid(10);
      assert.equal((await api(fake, 'PUT', `/cob/${t}`, { token, body: cobBody({}, fake.chaves[0]) })).status, 201);
      const patched = await api(fake, 'PATCH', `/cob/${t}`, { token, body: { valor: { original: '12.00' } } });
      assert.equal(patched.status, 200, patched.text);
      assert.equal((patched.json as { revisao: number }).revisao, 1);
      const both = await api(fake, 'PATCH', `/cob/${t}`, { token, body: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR', valor: { original: '1.00' } } });
      assert.equal(both.status, 400, 'removing and changing at once is refused');
      const removed = await api(fake, 'PATCH', `/cob/${t}`, { token, body: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } });
      assert.equal(removed.status, 200);
      assert.equal((removed.json as { status: string }).status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
      const rev0 = await api(fake, 'GET', `/cob/${t}?revisao=0`, { token });
      assert.equal((rev0.json as { valor: { original: string } }).valor.original, '10.50');
      const post = await api(fake, 'POST', '/cob', { token, body: cobBody({}, fake.chaves[0]) });
      assert.equal(post.status, 201);
      assert.match((post.json as { txid: string }).txid, /^[a-zA-Z0-9]{26,35}$/);
      const cobv = await api(fake, 'GET', `/cobv/${txid(11)}`, { token });
      assert.equal(cobv.status, 403, 'cobv is routed (and needs cobv.read, which the client lacks)');
      const missing = await api(fake, 'GET', `/cob/${txid(11)}`, { token });
      assert.equal(missing.status, 404);
      assert.equal((missing.json as { type: string }).type, 'https://pix.bcb.gov.br/api/v2/error/CobNaoEncontrado');
    });
  });

  describe('payment, callbacks, devoluções', () => {
    let e2eid: string;

    it('pay(): the charge is CONCLUIDA, the Pix is readable, and the callback arrives over mTLS with the PSP certificate', async () => {
      const t = txid(20);
      await api(fake, 'PUT', `/cob/${t}`, { token, body: cobBody({ valor: { original: '99.99' } }, fake.chaves[0]) });
      const before = receiver.received.length;
      clock.advance(60_000);
      const { pix, callback } = await fake.pay(t);
      e2eid = pix.endToEndId;
      assert.match(e2eid, /^E99999008\d{12}[a-zA-Z0-9]{11}$/);
      assert.equal(callback?.status, 200);
      const got = receiver.received.slice(before);
      assert.equal(got.length, 1);
      assert.equal(got[0].path, '/webhooks/pix-psp/pix', '{webhookUrl}/pix');
      assert.equal(got[0].authorized, true);
      assert.equal(got[0].peerFingerprint256, fake.callbackCertificate.fingerprint256);
      assert.deepEqual(got[0].body, { pix: [{ endToEndId: e2eid, txid: t, valor: '99.99', chave: fake.chaves[0], horario: new Date(clock.nowMs()).toISOString() }] });
      const cob = await api(fake, 'GET', `/cob/${t}`, { token });
      assert.equal((cob.json as { status: string }).status, 'CONCLUIDA');
      assert.equal((cob.json as { pix: { endToEndId: string }[] }).pix[0].endToEndId, e2eid);
      const one = await api(fake, 'GET', `/pix/${e2eid}`, { token });
      assert.equal(one.status, 200);
      assert.equal((one.json as { valor: string }).valor, '99.99');
      const inicio = new Date(clock.nowMs() - 3600_000).toISOString();
      const fim = new Date(clock.nowMs()).toISOString();
      const list = await api(fake, 'GET', `/pix?inicio=${inicio}&fim=${fim}&txid=${t}`, { token });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual((list.json as { pix: { endToEndId: string }[] }).pix.map((p) => p.endToEndId), [e2eid]);
      const page = await api(fake, 'GET', `/pix?inicio=${inicio}&fim=${fim}&paginacao.itensPorPagina=1&paginacao.paginaAtual=0`, { token });
      assert.equal(page.status, 200, page.text);
      assert.deepEqual((page.json as { parametros: { paginacao: unknown } }).parametros.paginacao, { paginaAtual: 0, itensPorPagina: 1, quantidadeDePaginas: 1, quantidadeTotalDeItens: 1 });
      assert.equal((await api(fake, 'GET', `/pix?inicio=${inicio}&fim=${fim}&paginacao.itensPorPagina=0`, { token })).status, 400, 'itensPorPagina >= 1');
      assert.equal((await api(fake, 'GET', `/pix?inicio=${inicio}&fim=${fim}&cpf=123`, { token })).status, 400, 'a CPF filter of 3 digits');
      assert.equal((await api(fake, 'GET', `/pix?inicio=${fim}&fim=${inicio}`, { token })).status, 400, 'fim before inicio');
      assert.equal((await api(fake, 'GET', `/pix?fim=${fim}`, { token })).status, 400, 'inicio is required');
      await assert.rejects(fake.pay(t), /CONCLUIDA/);
      const onPaid = await api(fake, 'PUT', `/cob/${t}`, { token, body: cobBody({ valor: { original: '1.00' } }, fake.chaves[0]) });
      assert.equal(onPaid.status, 400, 'a paid charge cannot be changed by PUT');
    });

    it('devolução: 201 EM_PROCESSAMENTO, a repeated id or too much is 400, settleRefund() finishes it and calls back', async () => {
      const put = await api(fake, 'PUT', `/pix/${e2eid}/devolucao/refund1`, { token, body: { valor: '50.00' } });
      assert.equal(put.status, 201, put.text);
      const dev = put.json as { id: string; rtrId: string; status: string; natureza: string };
      assert.equal(dev.status, 'EM_PROCESSAMENTO');
      assert.equal(dev.natureza, 'ORIGINAL');
      assert.match(dev.rtrId, /^D99999008/);
      const repeated = await api(fake, 'PUT', `/pix/${e2eid}/devolucao/refund1`, { token, body: { valor: '50.00' } });
      assert.equal(repeated.status, 400, 'the standard refuses a repeated devolução id');
      assert.equal((repeated.json as { type: string }).type, 'https://pix.bcb.gov.br/api/v2/error/PixDevolucaoInvalida');
      const tooMuch = await api(fake, 'PUT', `/pix/${e2eid}/devolucao/refund2`, { token, body: { valor: '50.00' } });
      assert.equal(tooMuch.status, 400, '50.00 + 50.00 > 99.99');
      const badId = await api(fake, 'PUT', `/pix/${e2eid}/devolucao/${'x'.repeat(36)}`, { token, body: { valor: '1.00' } });
      assert.equal(badId.status, 400, 'a devolução id is at most 35');
      const before = receiver.received.length;
      const { callback } = await fake.settleRefund(e2eid, 'refund1');
      assert.equal(callback?.status, 200);
      const body = receiver.received[before].body as { pix: { devolucoes: { id: string; status: string }[] }[] };
      assert.deepEqual(body.pix[0].devolucoes.map((d) => [d.id, d.status]), [['refund1', 'DEVOLVIDO']]);
      const get = await api(fake, 'GET', `/pix/${e2eid}/devolucao/refund1`, { token });
      assert.equal((get.json as { status: string }).status, 'DEVOLVIDO');
      const rest = await api(fake, 'PUT', `/pix/${e2eid}/devolucao/refund2`, { token, body: { valor: '49.99' } });
      assert.equal(rest.status, 201, 'the rest, to the centavo');
    });

    it('a MED return (MED_FRAUDE / MED_OPERACIONAL) the receiver did not ask for debits the Pix and calls back', async () => {
      const t = txid(21);
      await api(fake, 'PUT', `/cob/${t}`, { token, body: cobBody({ valor: { original: '30.00' } }, fake.chaves[0]) });
      const { pix } = await fake.pay(t);
      const before = receiver.received.length;
      const { devolucao, callback } = await fake.startMedReturn(pix.endToEndId, { natureza: 'MED_OPERACIONAL', valor: '10.00' });
      assert.equal(devolucao.natureza, 'MED_OPERACIONAL');
      assert.equal(devolucao.status, 'DEVOLVIDO');
      assert.equal(callback?.status, 200);
      assert.equal(receiver.received.length, before + 1);
      const fraud = await fake.startMedReturn(pix.endToEndId);
      assert.equal(fraud.devolucao.natureza, 'MED_FRAUDE');
      assert.equal(fraud.devolucao.valor, '20.00', 'the rest of the Pix by default');
      const read = await api(fake, 'GET', `/pix/${pix.endToEndId}`, { token });
      assert.deepEqual((read.json as { devolucoes: { natureza: string }[] }).devolucoes.map((d) => d.natureza), ['MED_OPERACIONAL', 'MED_FRAUDE']);
      const refund = await api(fake, 'PUT', `/pix/${pix.endToEndId}/devolucao/late1`, { token, body: { valor: '0.01' } });
      assert.equal(refund.status, 400, 'nothing left to return');
    });
  });

  describe('faults', () => {
    it('503: ServicoIndisponivel with Retry-After, nothing created', async () => {
      fake.inject({ kind: 'unavailable', operation: 'PUT /cob/{txid}', retryAfterS: 7 });
      const a = await api(fake, 'PUT', `/cob/${txid(30)}`, { token, body: cobBody({}, fake.chaves[0]) });
      assert.equal(a.status, 503);
      assert.equal(a.headers['retry-after'], '7');
      assert.equal((a.json as { type: string }).type, 'https://pix.bcb.gov.br/api/v2/error/ServicoIndisponivel');
      assert.equal(fake.getCob(txid(30)), undefined);
      assert.equal((await api(fake, 'PUT', `/cob/${txid(30)}`, { token, body: cobBody({}, fake.chaves[0]) })).status, 201, 'only the next request');
    });

    it('504: IndisponibilidadePorTempoEsgotado, with the work not done, or done behind the gateway', async () => {
      fake.inject({ kind: 'gateway-timeout', operation: 'PUT /cob/{txid}' });
      const a = await api(fake, 'PUT', `/cob/${txid(31)}`, { token, body: cobBody({}, fake.chaves[0]) });
      assert.equal(a.status, 504);
      assert.equal((a.json as { type: string }).type, 'https://pix.bcb.gov.br/api/v2/error/IndisponibilidadePorTempoEsgotado');
      assert.equal(fake.getCob(txid(31)), undefined);
      fake.inject({ kind: 'gateway-timeout', operation: 'PUT /cob/{txid}', applied: true });
      const b = await api(fake, 'PUT', `/cob/${txid(32)}`, { token, body: cobBody({}, fake.chaves[0]) });
      assert.equal(b.status, 504);
      assert.equal(fake.getCob(txid(32))?.status, 'ATIVA', 'created although the answer was a 504');
    });

    it('slow: the answer outlasts the client\'s timeout; the charge was created all the same', async () => {
      fake.inject({ kind: 'slow', operation: 'PUT /cob/{txid}' });
      await assert.rejects(api(fake, 'PUT', `/cob/${txid(33)}`, { token, body: cobBody({}, fake.chaves[0]), timeoutMs: 300 }), /timed out/);
      assert.equal(fake.getCob(txid(33))?.status, 'ATIVA');
      const entry = fake.requests.filter((r) => r.operation === 'PUT /cob/{txid}').at(-1);
      // The client's hang-up reaches the fake's socket shortly after the client gives up.
      for (let i = 0; i < 100 && entry?.outcome !== 'client-gone'; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(entry?.outcome, 'client-gone');
      assert.equal(fake.releaseHeldAnswers(), 1);
      assert.equal(entry?.outcome, 'client-gone', 'nobody was left to answer');
      // With a delay on the fake's clock, the answer comes when the clock gets there.
      fake.inject({ kind: 'slow', operation: 'GET /cob/{txid}', delayMs: 30_000 });
      const pending = api(fake, 'GET', `/cob/${txid(33)}`, { token });
      await new Promise((r) => setTimeout(r, 50));
      clock.advance(30_000);
      assert.equal((await pending).status, 200);
    });

    it('drop: the charge is created, then the connection closes without an answer; the retry answers it', async () => {
      fake.inject({ kind: 'drop', operation: 'PUT /cob/{txid}' });
      await assert.rejects(api(fake, 'PUT', `/cob/${txid(34)}`, { token, body: cobBody({}, fake.chaves[0]) }), /socket hang up|ECONNRESET/);
      assert.equal(fake.getCob(txid(34))?.status, 'ATIVA');
      const retry = await api(fake, 'PUT', `/cob/${txid(34)}`, { token, body: cobBody({}, fake.chaves[0]) });
      assert.equal(retry.status, 201);
      assert.equal((retry.json as { revisao: number }).revisao, 0, 'the same charge, not a second one');
    });

    it('a revoked token: 401 until the client asks for a new one', async () => {
      const t = await accessToken(fake);
      fake.revokeTokens();
      assert.equal((await api(fake, 'GET', `/cob/${txid(34)}`, { token: t })).status, 401);
      token = await accessToken(fake);
      assert.equal((await api(fake, 'GET', `/cob/${txid(34)}`, { token })).status, 200);
    });

    it('duplicate and out-of-order callbacks', async () => {
      const a = txid(40);
      const b = txid(41);
      for (const t of [a, b]) await api(fake, 'PUT', `/cob/${t}`, { token, body: cobBody({}, fake.chaves[0]) });
      fake.holdCallbacks();
      await fake.pay(a);
      clock.advance(1000);
      await fake.pay(b);
      const before = receiver.received.length;
      const sent = await fake.releaseCallbacks({ order: 'reverse', duplicate: true });
      assert.equal(sent.length, 4);
      const txids = receiver.received.slice(before).map((r) => (r.body as { pix: { txid: string }[] }).pix[0].txid);
      assert.deepEqual(txids, [b, b, a, a], 'newest first, each twice');
      const again = await fake.resendCallback();
      assert.deepEqual(again.body, sent[3].body);
      // Lost: held, then thrown away; the Pix is still there for whoever asks.
      const c = txid(45);
      await api(fake, 'PUT', `/cob/${c}`, { token, body: cobBody({}, fake.chaves[0]) });
      const count = receiver.received.length;
      fake.holdCallbacks();
      const { pix } = await fake.pay(c);
      assert.equal(fake.discardHeldCallbacks(), 1);
      assert.equal(receiver.received.length, count, 'nothing arrived');
      assert.equal((await api(fake, 'GET', `/pix/${pix.endToEndId}`, { token })).status, 200);
    });

    it('forged callbacks: a certificate nobody trusts, no certificate, or the PSP\'s certificate telling a lie', async () => {
      const t = txid(42);
      await api(fake, 'PUT', `/cob/${t}`, { token, body: cobBody({}, fake.chaves[0]) });
      const before = receiver.received.length;
      const rogue = await fake.forgeCallback({ txid: t, valor: '10.50' });
      assert.equal(rogue.status, 403, 'the receiver sees a certificate it does not trust');
      const lie = await fake.forgeCallback({ txid: t, valor: '10.50', certificate: 'psp' });
      assert.equal(lie.status, 200);
      const e2e = (lie.body.pix[0] as { endToEndId: string }).endToEndId;
      assert.equal((await api(fake, 'GET', `/pix/${e2e}`, { token })).status, 404, 'the truth at the PSP: no such Pix');
      assert.equal(fake.getCob(t)?.status, 'ATIVA');
      const { pix } = await fake.pay(t);
      const noCert = await fake.sendCallbackFor(pix.endToEndId, 'none');
      assert.equal(noCert.status, 403);
      const got = receiver.received.slice(before);
      assert.deepEqual(got.map((r) => r.authorized), [false, true, true, false]);
      assert.equal(got[3].peerFingerprint256, undefined, 'no client certificate at all');
    });

    it('a callback for a txid the receiver never created, and a Pix with no txid (no callback)', async () => {
      const before = receiver.received.length;
      const unknown = 'naoCriadoPorNos000000000000042';
      const { pix, callback } = await fake.receivePix({ valor: '5.00', txid: unknown });
      assert.equal(callback?.status, 200);
      assert.equal((receiver.received[before].body as { pix: { txid: string }[] }).pix[0].txid, unknown);
      assert.equal((await api(fake, 'GET', `/cob/${unknown}`, { token })).status, 404);
      assert.equal((await api(fake, 'GET', `/pix/${pix.endToEndId}`, { token })).status, 200);
      const plain = await fake.receivePix({ valor: '1.00' });
      assert.equal(plain.callback, undefined, 'only Pix with a txid are notified');
    });

    it('pay after expiry: pay() refuses an expired charge, payAfterExpiry() brings the money in anyway', async () => {
      const t = txid(43);
      await api(fake, 'PUT', `/cob/${t}`, { token, body: cobBody({ calendario: { expiracao: 600 } }, fake.chaves[0]) });
      clock.advance(600_000);
      await assert.rejects(fake.pay(t), /expired/);
      const { pix, callback } = await fake.payAfterExpiry(t);
      assert.equal(callback?.status, 200);
      assert.equal(pix.txid, t);
      const u = txid(44);
      await api(fake, 'PUT', `/cob/${u}`, { token, body: cobBody({}, fake.chaves[0]) });
      await api(fake, 'PATCH', `/cob/${u}`, { token, body: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } });
      const late = await fake.payAfterExpiry(u);
      assert.equal(late.pix.txid, u);
      const cob = await api(fake, 'GET', `/cob/${u}`, { token });
      assert.equal((cob.json as { status: string }).status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR', 'the charge stays removed; the money is there');
      assert.equal((cob.json as { pix: unknown[] }).pix.length, 1);
    });

    it('a fault on the token endpoint', async () => {
      fake.inject({ kind: 'unavailable', operation: 'POST /oauth/token' });
      assert.equal((await fetchToken(fake)).status, 503);
      assert.equal((await fetchToken(fake)).status, 200);
    });
  });

  describe('webhooks', () => {
    it('PUT/GET/DELETE /webhook/{chave}; a key that is not the receiver\'s and a non-https URL are refused', async () => {
      const chave = encodeURIComponent(fake.chaves[0]);
      const got = await api(fake, 'GET', `/webhook/${chave}`, { token });
      assert.equal(got.status, 200);
      assert.equal((got.json as { webhookUrl: string }).webhookUrl, receiver.url);
      assert.equal((await api(fake, 'PUT', `/webhook/${chave}`, { token, body: { webhookUrl: 'http://127.0.0.1/x' } })).status, 400);
      assert.equal((await api(fake, 'PUT', `/webhook/${chave}`, { token, body: { webhookUrl: 'not a url' } })).status, 400);
      assert.equal((await api(fake, 'PUT', '/webhook/outra-chave', { token, body: { webhookUrl: receiver.url } })).status, 400);
      assert.equal((await api(fake, 'DELETE', `/webhook/${chave}`, { token })).status, 204);
      assert.equal((await api(fake, 'GET', `/webhook/${chave}`, { token })).status, 404);
      const t = txid(50);
      await api(fake, 'PUT', `/cob/${t}`, { token, body: cobBody({}, fake.chaves[0]) });
      assert.equal((await fake.pay(t)).callback, undefined, 'no webhook, no callback');
      assert.equal((await api(fake, 'PUT', `/webhook/${chave}`, { token, body: { webhookUrl: receiver.url } })).status, 200);
    });
  });
});

describe('fake PSP, Efí dialect', () => {
  let fake: FakePixPsp;
  before(async () => {
    fake = await startFakePixPsp({ dialect: 'efi', clock: new ManualClock() });
  });
  after(async () => {
    await fake.close();
  });
  afterEach(() => assert.deepEqual(fake.contractViolations.splice(0), []));

  it('serves the API under /v2 and takes the token request as JSON', async () => {
    assert.ok(fake.baseUrl.endsWith('/v2'));
    const form = await fetchToken(fake, fake.client, { dialect: 'standard' });
    assert.equal(form.status, 400, 'Efí wants {"grant_type":"client_credentials"}');
    const token = await accessToken(fake);
    const put = await api(fake, 'PUT', `/cob/${TXID}`, { token, body: cobBody({}, fake.chaves[0]) });
    assert.equal(put.status, 201, put.text);
    const root = await httpsCall(`${fake.origin}/cob/${TXID}`, { headers: { authorization: `Bearer ${token}` }, tls: fake.client });
    assert.equal(root.status, 404, 'no API at the root in this dialect');
  });

  it('checks the webhook\'s mTLS on registration unless x-skip-mtls-checking is true', async () => {
    const token = await accessToken(fake);
    const pki = createPki();
    const strict = await startWebhookReceiver({ serverPair: pki.issueServer('strict'), trust: [fake.pki.ca], requireCert: 'handshake' });
    const lax = await startWebhookReceiver({ serverPair: pki.issueServer('lax'), trust: [fake.pki.ca], requireCert: 'none' });
    fake.trustForCallbacks(pki.ca);
    try {
      const chave = encodeURIComponent(fake.chaves[0]);
      const bad = await api(fake, 'PUT', `/webhook/${chave}`, { token, body: { webhookUrl: lax.url } });
      assert.equal(bad.status, 400, 'a webhook that accepts a client without certificate is refused');
      assert.equal((await api(fake, 'PUT', `/webhook/${chave}`, { token, body: { webhookUrl: strict.url } })).status, 200);
      assert.ok(strict.received.length >= 1, 'the test notification arrived');
      const skipped = await api(fake, 'PUT', `/webhook/${chave}`, { token, body: { webhookUrl: lax.url }, headers: { 'x-skip-mtls-checking': 'true' } });
      assert.equal(skipped.status, 200);
    } finally {
      await strict.close();
      await lax.close();
      pki.dispose();
    }
  });
});

describe('fake PSP, devoluções settled at once (autoSettleRefunds)', () => {
  it('answers 201 EM_PROCESSAMENTO, then the devolução is DEVOLVIDO and called back; NAO_REALIZADO frees the amount', async () => {
    const fake = await startFakePixPsp({ autoSettleRefunds: true, clock: new ManualClock() });
    const receiver = await startWebhookReceiver({ serverPair: fake.pki.issueServer('platform'), trust: [fake.pki.ca] });
    try {
      const token = await accessToken(fake);
      await api(fake, 'PUT', `/webhook/${fake.chaves[0]}`, { token, body: { webhookUrl: receiver.url } });
      await api(fake, 'PUT', `/cob/${TXID}`, { token, body: cobBody({ valor: { original: '20.00' } }, fake.chaves[0]) });
      const { pix } = await fake.pay(TXID);
      const put = await api(fake, 'PUT', `/pix/${pix.endToEndId}/devolucao/r1`, { token, body: { valor: '20.00', descricao: 'Pedido cancelado' } });
      assert.equal(put.status, 201);
      assert.equal((put.json as { status: string }).status, 'EM_PROCESSAMENTO');
      for (let i = 0; i < 100 && receiver.received.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      const last = receiver.received.at(-1)?.body as { pix: { devolucoes: { id: string; status: string; descricao: string }[] }[] };
      assert.deepEqual(last.pix[0].devolucoes.map((d) => [d.id, d.status, d.descricao]), [['r1', 'DEVOLVIDO', 'Pedido cancelado']]);
      await assert.rejects(fake.startMedReturn(pix.endToEndId, { valor: '0.01' }), /exceeds/, 'nothing left after the full refund');
      // A devolução that failed (NAO_REALIZADO) does not count against the Pix's amount.
      const t2 = txid(2);
      await api(fake, 'PUT', `/cob/${t2}`, { token, body: cobBody({ valor: { original: '5.00' } }, fake.chaves[0]) });
      const second = await fake.pay(t2);
      const med = await fake.startMedReturn(second.pix.endToEndId, { status: 'EM_PROCESSAMENTO' });
      assert.equal((await api(fake, 'PUT', `/pix/${second.pix.endToEndId}/devolucao/r2`, { token, body: { valor: '0.01' } })).status, 400, 'the MED in progress holds the whole amount');
      const failed = await fake.settleRefund(second.pix.endToEndId, med.devolucao.id, 'NAO_REALIZADO', 'Conta do pagador encerrada');
      assert.equal(failed.callback?.status, 200);
      assert.equal((await api(fake, 'PUT', `/pix/${second.pix.endToEndId}/devolucao/r2`, { token, body: { valor: '5.00' } })).status, 201);
      assert.deepEqual(fake.contractViolations, []);
    } finally {
      await receiver.close();
      await fake.close();
    }
  });
});

describe('money helpers of the fake', () => {
  it('converts amounts to centavos and back without floats', () => {
    assert.equal(toCentavos('0.01'), 1);
    assert.equal(toCentavos('99.99'), 9999);
    assert.equal(toCentavos('1234567890.12'), 123456789012);
    assert.equal(fromCentavos(1), '0.01');
    assert.equal(fromCentavos(123456789012), '1234567890.12');
    assert.throws(() => toCentavos('10.5'));
    assert.throws(() => toCentavos('-1.00'));
  });
});
