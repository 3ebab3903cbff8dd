import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isCpf, maskPixKey, validatePixKey } from '../src/domain/pix-key.js';
import { participantByCode, participantsFromCsv, participantsModule, parseCsv } from '../src/domain/banks.js';
import { STR_PARTICIPANTS, STR_SOURCE } from '../src/domain/str-participants.js';

// Pix keys as the Banco Central's DICT defines each type, and the STR participant list (bank
// code -> ISPB) with the command that refreshes it from a file (issue 26).

describe('Pix keys', () => {
  const good: Array<[string, string, string]> = [
    ['cpf', '529.982.247-25', '52998224725'],
    ['cpf', '11144477735', '11144477735'],
    ['cnpj', '11.222.333/0001-81', '11222333000181'],
    ['email', 'Financeiro@Loja.com.br', 'financeiro@loja.com.br'],
    ['phone', '+5511987654321', '+5511987654321'],
    ['phone', '+556133334444', '+556133334444'],
    ['evp', '123E4567-E89B-12D3-A456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
  ];
  for (const [type, key, canonical] of good) {
    test(`${type} ${key} is a key, stored as ${canonical}`, () => assert.deepEqual(validatePixKey(type, key), { ok: true, value: { type, key: canonical } }));
  }
  const bad: Array<[string, string, RegExp]> = [
    ['cpf', '529.982.247-24', /check digits/],
    ['cpf', '111.111.111-11', /check digits/],
    ['cpf', '5299822472', /11 digits/],
    ['cnpj', '11222333000180', /not a valid CNPJ/],
    ['email', 'sem-arroba.com', /e-mail/],
    ['email', `${'a'.repeat(66)}@exemplo.com`, /77/],
    ['phone', '11987654321', /\+55/],
    ['phone', '+14155550100', /\+55/],
    ['phone', '+5501987654321', /\+55/],
    ['phone', '+55119876543210', /\+55/],
    ['evp', '123e4567e89b12d3a456426614174000', /UUID/],
    ['iban', 'x', /type must be one of/],
  ];
  for (const [type, key, message] of bad) {
    test(`${type} ${key.slice(0, 30)} is refused`, () => {
      const r = validatePixKey(type, key);
      assert.equal(r.ok, false);
      assert.match(r.ok ? '' : r.message, message);
      assert.ok(r.ok || !r.message.includes(key), 'the message never echoes the key');
    });
  }
  test('CPF check digits', () => {
    assert.equal(isCpf('52998224725'), true);
    assert.equal(isCpf('00000000000'), false);
  });
  test('masks show enough to recognise a key, not to use it', () => {
    assert.equal(maskPixKey({ type: 'cpf', key: '52998224725' }), '***.982.247-**');
    assert.equal(maskPixKey({ type: 'cnpj', key: '11222333000181' }), '11.***.***/0001-**');
    assert.equal(maskPixKey({ type: 'email', key: 'financeiro@loja.com.br' }), 'f***@loja.com.br');
    assert.equal(maskPixKey({ type: 'phone', key: '+5511987654321' }), '+5511*****4321');
    assert.equal(maskPixKey({ type: 'evp', key: '123e4567-e89b-12d3-a456-426614174000' }), '123e4567-****-****-****-********4000');
  });
});

describe('STR participants', () => {
  test('the vendored list says where it came from, and knows the usual banks by code', () => {
    assert.match(STR_SOURCE.url, /ParticipantesSTR/);
    assert.match(STR_SOURCE.date, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(STR_SOURCE.participants, STR_PARTICIPANTS.length);
    assert.ok(STR_PARTICIPANTS.length > 300);
    assert.deepEqual(participantByCode('001'), { compe: '001', ispb: '00000000', name: 'BCO DO BRASIL S.A.' });
    assert.equal(participantByCode('341')?.ispb, '60701190');
    assert.equal(participantByCode('364')?.ispb, '09089356', 'Efí');
    assert.equal(participantByCode('260')?.ispb, '18236120', 'Nubank');
    assert.equal(participantByCode('999'), undefined);
    assert.equal(new Set(STR_PARTICIPANTS.map(([c]) => c)).size, STR_PARTICIPANTS.length, 'a code once');
  });

  const bcb = ['ISPB,Nome_Reduzido,Número_Código,Participa_da_Compe,Acesso_Principal,Nome_Extenso,Início_da_Operação',
    '00000000,BCO DO BRASIL S.A.,001,Sim,RSFN,Banco do Brasil S.A.,22/04/2002',
    '00038121,Selic,n/a,Não,RSFN,Banco Central do Brasil - Selic,22/04/2002',
    '00122327,SANTINVEST S.A. - CFI,539,Não,RSFN,"SANTINVEST S.A. - CREDITO, FINANCIAMENTO E INVESTIMENTOS",17/04/2023',
    '33737818,"CCC POUP INV DE MS, GO, DF E TO",582,Não,RSFN,"COOPERATIVA ""CENTRAL""",08/03/2024',
    ...Array.from({ length: 120 }, (_, i) => `${String(10_000_000 + i)},BANCO ${i},${String(600 + i).padStart(3, '0')},Não,RSFN,Banco ${i},01/01/2020`)].join('\r\n') + '\r\n';

  test('the Banco Central\'s CSV: quoted fields, rows without a code left out, sorted by code', () => {
    assert.deepEqual(parseCsv('a,"b,""c"""\n1,2\n'), [['a', 'b,"c"'], ['1', '2']]);
    const list = participantsFromCsv('\uFEFF' + bcb);
    assert.equal(list.length, 123);
    assert.deepEqual(list[0], { compe: '001', ispb: '00000000', name: 'BCO DO BRASIL S.A.' });
    assert.deepEqual(list.find((p) => p.compe === '582'), { compe: '582', ispb: '33737818', name: 'CCC POUP INV DE MS, GO, DF E TO' });
    assert.ok(!list.some((p) => p.name === 'Selic'));
    assert.throws(() => participantsFromCsv(bcb + '99,X,001,Sim,RSFN,X,01/01/2020\n'), /ISPB/);
    assert.throws(() => participantsFromCsv(bcb + '99999999,X,001,Sim,RSFN,X,01/01/2020\n'), /appears twice/);
    assert.throws(() => participantsFromCsv('Foo,Bar\n1,2\n'), /no column/);
  });

  test('the refresh command reads a file and writes the module, with its source and date', () => {
    const dir = mkdtempSync(join(tmpdir(), 'str-'));
    try {
      writeFileSync(join(dir, 'ParticipantesSTR.csv'), bcb);
      const out = join(dir, 'str-participants.ts');
      const said = execFileSync(process.execPath, ['--import', 'tsx', 'scripts/refresh-str-participants.ts', join(dir, 'ParticipantesSTR.csv'), '--date', '2026-11-28', '--out', out], { encoding: 'utf8' });
      assert.match(said, /123 participants/);
      const text = readFileSync(out, 'utf8');
      assert.equal(text, participantsModule(participantsFromCsv(bcb), { file: 'ParticipantesSTR.csv', url: 'https://www.bcb.gov.br/content/estabilidadefinanceira/str1/ParticipantesSTR.csv', date: '2026-11-28' }));
      assert.match(text, /date: '2026-11-28'/);
      assert.throws(() => execFileSync(process.execPath, ['--import', 'tsx', 'scripts/refresh-str-participants.ts', join(dir, 'ParticipantesSTR.csv')], { stdio: 'pipe' }), /usage/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
