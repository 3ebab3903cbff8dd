import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatMoney, moneyInput, parseMoney, parsePercentage, type Lang, type MoneyParse } from '../src/i18n.js';

// The back office's money parsing, as a pure function (the browser test types into the fields and
// sees the same answers on the page). An amount typed in the other language's notation is refused,
// never read as another amount: "10.50" in pt-BR is not R$ 1.050,00.

const ok = (cents: number): MoneyParse => ({ ok: true, cents });
const no = (problem: Extract<MoneyParse, { ok: false }>['problem']): MoneyParse => ({ ok: false, problem });

const CASES: Record<Lang, Array<[string, MoneyParse]>> = {
  'pt-BR': [
    ['10', ok(1000)],
    ['10,5', ok(1050)],
    ['10,50', ok(1050)],
    ['0,01', ok(1)],
    ['1234,56', ok(123_456)],
    ['1.234,56', ok(123_456)],
    ['1.234', ok(123_400)],
    ['12.345.678,90', ok(1_234_567_890)],
    ['R$ 1.234,56', ok(123_456)],
    ['R$\u00a01.234,56', ok(123_456)], // as formatMoney writes it, copied from the page
    ['  2,50  ', ok(250)],
    // The other notation, or what only it could mean: refused, not read as another amount.
    ['10.50', no('ambiguous')],
    ['10.5', no('ambiguous')],
    ['1,234.56', no('ambiguous')],
    ['1,234,567', no('ambiguous')],
    ['10,505', no('ambiguous')],
    // Malformed in both notations.
    ['10,5055', no('decimals')],
    ['1.23.456', no('grouping')],
    ['12.34,56', no('grouping')],
    ['1.2345,00', no('grouping')],
    ['10,', no('invalid')],
    [',50', no('invalid')],
    ['10,5,0', no('invalid')],
    ['-10,00', no('invalid')],
    ['1 234,56', no('invalid')],
    ['1e3', no('invalid')],
    ['R$', no('required')],
    ['', no('required')],
    ['   ', no('required')],
    ['99999999999999999999', no('invalid')],
  ],
  en: [
    ['10', ok(1000)],
    ['10.5', ok(1050)],
    ['10.50', ok(1050)],
    ['1234.56', ok(123_456)],
    ['1,234.56', ok(123_456)],
    ['1,234', ok(123_400)],
    ['R$1,234.56', ok(123_456)],
    ['10,50', no('ambiguous')],
    ['1.234,56', no('ambiguous')],
    ['10.505', no('ambiguous')],
    ['10.5055', no('decimals')],
    ['1,23,456', no('grouping')],
    ['10.', no('invalid')],
    ['', no('required')],
  ],
};

for (const [lang, cases] of Object.entries(CASES) as Array<[Lang, Array<[string, MoneyParse]>]>) {
  test(`parseMoney (${lang}): the language's own notation, strictly`, () => {
    for (const [text, expected] of cases) assert.deepEqual(parseMoney(lang, text), expected, JSON.stringify(text));
  });

  test(`parseMoney (${lang}) reads back what the app writes: moneyInput and formatMoney`, () => {
    for (const cents of [1, 10, 99, 100, 250, 1050, 123_456, 100_000_000, 9_999_999_999]) {
      assert.deepEqual(parseMoney(lang, moneyInput(lang, cents)), ok(cents), `${lang} input ${cents}`);
      assert.deepEqual(parseMoney(lang, formatMoney(lang, cents)), ok(cents), `${lang} ${formatMoney(lang, cents)}`);
    }
  });
}

test('parsePercentage: either separator, at most two decimals, above 0 and up to 100', () => {
  for (const [text, expected] of [['12,5', 12.5], ['12.5', 12.5], ['100', 100], ['0,01', 0.01], ['33.33 %', 33.33]] as const) assert.equal(parsePercentage(text), expected, text);
  for (const text of ['', '0', '100,01', '12,345', '1.000', 'abc', '-5']) assert.equal(parsePercentage(text), null, text);
});
