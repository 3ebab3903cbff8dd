import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';

import { cnpjCheckDigits, isValidCnpj, maskCnpj, normalizeCnpj } from '../src/domain/cnpj.js';
import { validateBankAccount } from '../src/domain/bank-account.js';
import { allocateBalance, assertPayoutAmount, PayoutExceedsSettlement } from '../src/domain/payout-balance.js';
import { computeFee, DEFAULT_FEE_SCHEDULE, type FeeSchedule, type PaymentMethod } from '../src/domain/fees.js';
import {
  computeSplit,
  percentageToBps,
  prorateReduction,
  ruleFits,
  selectRule,
  validateSplitRuleShape,
  type SplitRule,
  type SplitShare,
} from '../src/domain/split.js';

const RUNS = { numRuns: 2000 };
const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const alnumChar = fc.constantFrom(...ALNUM.split(''));
const digitChar = fc.constantFrom(...'0123456789'.split(''));
const cnpjBase = fc.string({ unit: alnumChar, minLength: 12, maxLength: 12 });
const method = fc.constantFrom<PaymentMethod>('pix', 'credit_card');

function formatCnpj(c: string): string {
  return `${c.slice(0, 2)}.${c.slice(2, 5)}.${c.slice(5, 8)}/${c.slice(8, 12)}-${c.slice(12)}`;
}

// ---------------------------------------------------------------------------
describe('cnpj', () => {
  it('accepts the known numeric and official alphanumeric examples', () => {
    assert.equal(normalizeCnpj('11.222.333/0001-81'), '11222333000181');
    assert.equal(normalizeCnpj('11222333000181'), '11222333000181');
    assert.equal(normalizeCnpj('12.ABC.345/01DE-35'), '12ABC34501DE35');
    assert.equal(normalizeCnpj('12ABC34501DE35'), '12ABC34501DE35');
    assert.equal(cnpjCheckDigits('112223330001'), '81');
    assert.equal(cnpjCheckDigits('12ABC34501DE'), '35');
    assert.equal(isValidCnpj('11.222.333/0001-81'), true);
  });

  it('uppercases lowercase input and strips punctuation and spaces', () => {
    assert.equal(normalizeCnpj('12.abc.345/01de-35'), '12ABC34501DE35');
    assert.equal(normalizeCnpj(' 11 222 333 / 0001 - 81 '), '11222333000181');
    assert.equal(cnpjCheckDigits('12abc34501de'), '35');
  });

  it('rejects wrong check digits, bad shapes and foreign characters', () => {
    for (const bad of [
      '11.222.333/0001-82',
      '11.222.333/0001-91',
      '12.ABC.345/01DE-36',
      '12.ABC.345/01DE-3A', // check digits are always numeric
      '1122233300018', // 13 chars
      '112223330001811', // 15 chars
      '11_222_333_0001_81', // only . / - and whitespace are stripped
      '12.ÁBC.345/01DE-35',
      '',
      'not a cnpj',
    ]) {
      assert.equal(normalizeCnpj(bad), null, bad);
      assert.equal(isValidCnpj(bad), false, bad);
    }
  });

  it('rejects all-same-digit CNPJs even when the check digits match', () => {
    assert.equal(cnpjCheckDigits('000000000000'), '00'); // would pass modulo 11
    for (let d = 0; d <= 9; d++) {
      const same = String(d).repeat(14);
      assert.equal(normalizeCnpj(same), null, same);
      assert.equal(normalizeCnpj(formatCnpj(same)), null, same);
    }
  });

  it('cnpjCheckDigits rejects malformed bases', () => {
    assert.throws(() => cnpjCheckDigits('12345678901'));
    assert.throws(() => cnpjCheckDigits('1234567890123'));
    assert.throws(() => cnpjCheckDigits('12345678901!'));
  });

  it('property: any 12-char base plus computed check digits validates (any case, any formatting)', () => {
    fc.assert(
      fc.property(cnpjBase, (base) => {
        const full = base + cnpjCheckDigits(base);
        assert.match(full, /^[0-9A-Z]{12}[0-9]{2}$/);
        if (/^(.)\1{13}$/.test(full)) {
          assert.equal(normalizeCnpj(full), null);
          return;
        }
        assert.equal(normalizeCnpj(full), full);
        assert.equal(normalizeCnpj(full.toLowerCase()), full);
        assert.equal(normalizeCnpj(formatCnpj(full)), full);
      }),
      RUNS,
    );
  });

  it('property: punctuation inserted anywhere is stripped', () => {
    const sep = fc.constantFrom('', '', '.', '/', '-', ' ', '\t');
    fc.assert(
      fc.property(cnpjBase, fc.array(sep, { minLength: 15, maxLength: 15 }), (base, seps) => {
        const full = base + cnpjCheckDigits(base);
        fc.pre(!/^(.)\1{13}$/.test(full));
        let messy = seps[0];
        for (let i = 0; i < 14; i++) messy += full[i] + seps[i + 1];
        assert.equal(normalizeCnpj(messy), full);
      }),
      RUNS,
    );
  });

  it('property: changing any single check digit character invalidates', () => {
    fc.assert(
      fc.property(cnpjBase, fc.constantFrom(12, 13), alnumChar, (base, pos, replacement) => {
        const full = base + cnpjCheckDigits(base);
        fc.pre(full[pos] !== replacement);
        const changed = full.slice(0, pos) + replacement + full.slice(pos + 1);
        assert.equal(normalizeCnpj(changed), null);
        assert.equal(isValidCnpj(formatCnpj(changed)), false);
      }),
      RUNS,
    );
  });

  it('masks everything but the first 2 and the 4 branch characters', () => {
    assert.equal(maskCnpj('11.222.333/0001-81'), '11.***.***/0001-**');
    assert.equal(maskCnpj('12ABC34501DE35'), '12.***.***/01DE-**');
    assert.equal(maskCnpj('12abc34501de35'), '12.***.***/01DE-**');
    assert.equal(maskCnpj('garbage that should not leak'), '**.***.***/****-**');
    assert.equal(maskCnpj('1122233300018'), '**.***.***/****-**');
    fc.assert(
      fc.property(cnpjBase, (base) => {
        const full = base + cnpjCheckDigits(base);
        const masked = maskCnpj(formatCnpj(full));
        assert.equal(masked, `${full.slice(0, 2)}.***.***/${full.slice(8, 12)}-**`);
      }),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------------------
describe('bank account', () => {
  const valid = { bankCode: '001', agency: '1234', account: '123456-7', accountType: 'checking' };

  it('accepts a valid account and normalizes x check digits', () => {
    assert.deepEqual(validateBankAccount(valid), { ok: true, value: valid });
    const r = validateBankAccount({ bankCode: '237', agency: '1234-x', account: '00012345-x', accountType: 'savings' });
    assert.deepEqual(r, {
      ok: true,
      value: { bankCode: '237', agency: '1234-X', account: '00012345-X', accountType: 'savings' },
    });
    assert.equal(validateBankAccount({ ...valid, agency: '12345-6', accountType: 'payment' }).ok, true);
    assert.equal(validateBankAccount({ ...valid, agency: '1', account: '1-0' }).ok, true);
    assert.equal(validateBankAccount({ ...valid, account: '12345678901234567890-1' }).ok, true);
  });

  it('rejects non-objects', () => {
    for (const input of [null, undefined, 'x', 42, [valid]]) {
      const r = validateBankAccount(input);
      assert.equal(r.ok, false);
      if (!r.ok) assert.deepEqual(r.errors.map((e) => e.param), ['bankAccount']);
    }
  });

  it('reports every missing field', () => {
    const r = validateBankAccount({});
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.deepEqual(r.errors.map((e) => e.param), [
        'bankAccount.bankCode',
        'bankAccount.agency',
        'bankAccount.account',
        'bankAccount.accountType',
      ]);
    }
  });

  const invalidByField: Record<keyof typeof valid, unknown[]> = {
    bankCode: ['01', '0001', 'abc', '00a', 1, ' 001', null],
    agency: ['', '123456', '12a4', '1234-', '1234-56', '1234-Y', '-1', 1234, ' 1234'],
    account: ['1234567', '-7', '123456-', '123456-77', '123456-Y', 'abc-1', '123456789012345678901-1', 1234567, '123 456-7'],
    accountType: ['current', 'CHECKING', '', 0, null],
  };

  it('property: each invalid field yields an error naming exactly its param', () => {
    const cases = Object.entries(invalidByField).flatMap(([field, values]) => values.map((v) => [field, v] as const));
    fc.assert(
      fc.property(fc.constantFrom(...cases), ([field, bad]) => {
        const r = validateBankAccount({ ...valid, [field]: bad });
        assert.equal(r.ok, false);
        if (!r.ok) assert.deepEqual(r.errors.map((e) => e.param), [`bankAccount.${field}`]);
      }),
      { numRuns: 200 },
    );
  });

  it('property: valid random accounts pass; errors never echo the account number', () => {
    const digits = (min: number, max: number) => fc.string({ unit: digitChar, minLength: min, maxLength: max });
    fc.assert(
      fc.property(
        digits(3, 3),
        digits(1, 5),
        digits(6, 20),
        fc.constantFrom(...'0123456789Xx'.split('')),
        fc.constantFrom('checking', 'savings', 'payment'),
        (bankCode, agency, number, dv, accountType) => {
          const account = `${number}-${dv}`;
          const ok = validateBankAccount({ bankCode, agency, account, accountType });
          assert.equal(ok.ok, true);
          if (ok.ok) assert.equal(ok.value.account, `${number}-${dv.toUpperCase()}`);

          for (const badAccount of [`${number}${dv}`, `${number}-${dv}9`, `${number}A-${dv}`]) {
            const bad = validateBankAccount({ bankCode: 'x', agency, account: badAccount, accountType });
            assert.equal(bad.ok, false);
            if (!bad.ok) {
              assert.deepEqual(bad.errors.map((e) => e.param), ['bankAccount.bankCode', 'bankAccount.account']);
              const text = JSON.stringify(bad.errors);
              assert.ok(!text.includes(number), 'error output leaks the account number');
            }
          }
        },
      ),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------------------
describe('fees', () => {
  it('matches worked examples with the default schedule', () => {
    assert.deepEqual(DEFAULT_FEE_SCHEDULE, {
      pix: { percentBps: 99, fixedCents: 0 },
      credit_card: { percentBps: 399, fixedCents: 39 },
    });
    assert.deepEqual(computeFee(10_000, 'credit_card'), { feeCents: 438, netCents: 9562 });
    assert.deepEqual(computeFee(10_000, 'pix'), { feeCents: 99, netCents: 9901 });
    assert.deepEqual(computeFee(10_001, 'pix'), { feeCents: 100, netCents: 9901 }); // ceil(99.0099)
    assert.deepEqual(computeFee(1, 'pix'), { feeCents: 1, netCents: 0 }); // ceil rounds up
    assert.deepEqual(computeFee(10, 'credit_card'), { feeCents: 10, netCents: 0 }); // capped
    assert.deepEqual(computeFee(0, 'credit_card'), { feeCents: 0, netCents: 0 });
    assert.deepEqual(computeFee(123_456, 'credit_card'), { feeCents: 4926 + 39, netCents: 123_456 - 4965 });
    // Beyond 2^53 / 10000 the product needs BigInt; the result must still be exact.
    const max = Number.MAX_SAFE_INTEGER; // 9007199254740991
    const expectedPct = (BigInt(max) * 399n + 9999n) / 10000n;
    assert.equal(computeFee(max, 'credit_card').feeCents, Number(expectedPct) + 39);
  });

  it('rejects invalid inputs', () => {
    assert.throws(() => computeFee(-1, 'pix'));
    assert.throws(() => computeFee(1.5, 'pix'));
    assert.throws(() => computeFee(Number.NaN, 'pix'));
    assert.throws(() => computeFee(100, 'boleto' as PaymentMethod));
    const bad: FeeSchedule = { pix: { percentBps: 10_001, fixedCents: 0 }, credit_card: { percentBps: 0, fixedCents: 0 } };
    assert.throws(() => computeFee(100, 'pix', bad));
    const badFixed: FeeSchedule = { pix: { percentBps: 1.5, fixedCents: 0 }, credit_card: { percentBps: 0, fixedCents: -1 } };
    assert.throws(() => computeFee(100, 'credit_card', badFixed));
  });

  const schedule = fc.record({
    pix: fc.record({ percentBps: fc.integer({ min: 0, max: 10_000 }), fixedCents: fc.integer({ min: 0, max: 100_000 }) }),
    credit_card: fc.record({ percentBps: fc.integer({ min: 0, max: 10_000 }), fixedCents: fc.integer({ min: 0, max: 100_000 }) }),
  });
  const amount = fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));

  it('property: fee + net == amount, integers, non-negative, exact ceil', () => {
    fc.assert(
      fc.property(amount, method, schedule, (a, m, s) => {
        const { feeCents, netCents } = computeFee(a, m, s);
        assert.ok(Number.isSafeInteger(feeCents) && Number.isSafeInteger(netCents));
        assert.ok(feeCents >= 0 && netCents >= 0);
        assert.equal(feeCents + netCents, a);
        // Reference: pct is the least integer with pct * 10000 >= a * bps.
        const product = BigInt(a) * BigInt(s[m].percentBps);
        const pct = BigInt(feeCents - s[m].fixedCents);
        if (feeCents < a) {
          assert.ok(pct * 10000n >= product && (pct - 1n) * 10000n < product);
        } else {
          assert.ok((product + 9999n) / 10000n + BigInt(s[m].fixedCents) >= BigInt(a));
        }
      }),
      RUNS,
    );
  });

  it('property: fee and net are monotone in the amount', () => {
    fc.assert(
      fc.property(amount, fc.integer({ min: 0, max: 1_000_000 }), method, schedule, (a, delta, m, s) => {
        const b = Math.min(a + delta, Number.MAX_SAFE_INTEGER);
        const fa = computeFee(a, m, s);
        const fb = computeFee(b, m, s);
        assert.ok(fa.feeCents <= fb.feeCents);
        assert.ok(fa.netCents <= fb.netCents);
      }),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------------------
// Percentages up to 5% each so 20 shares never exceed 100%.
const share: fc.Arbitrary<SplitShare> = fc.oneof(
  fc.record({ recipientId: fc.constantFrom('r1', 'r2', 'r3'), percentage: fc.integer({ min: 1, max: 500 }).map((b) => b / 100) }),
  fc.record({ recipientId: fc.constantFrom('r1', 'r2', 'r3'), amountCents: fc.integer({ min: 1, max: 200_000 }) }),
);

function rule(partial: Partial<SplitRule> & Pick<SplitRule, 'id'>): SplitRule {
  return {
    priority: 0,
    createdAt: '2026-01-01T00:00:00.000Z',
    active: true,
    splits: [{ recipientId: 'r', percentage: 10 }],
    ...partial,
  };
}

describe('split: percentageToBps', () => {
  it('converts two-decimal percentages exactly and rejects the rest', () => {
    assert.equal(percentageToBps(10), 1000);
    assert.equal(percentageToBps(1.99), 199);
    assert.equal(percentageToBps(33.33), 3333);
    assert.equal(percentageToBps(0.01), 1);
    assert.equal(percentageToBps(0.1 + 0.2), 30); // 0.30000000000000004
    assert.equal(percentageToBps(100), 10_000);
    for (const bad of [0, -1, 100.01, 101, 0.001, 0.005, 10.005, 33.333, Number.NaN, Infinity, -Infinity]) {
      assert.equal(percentageToBps(bad), null, String(bad));
    }
  });

  it('property: k/100 round-trips for every k in 1..10000', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), (k) => {
        assert.equal(percentageToBps(k / 100), k);
        assert.equal(percentageToBps(Number((k / 100).toFixed(2))), k);
      }),
      RUNS,
    );
  });
});

describe('split: computeSplit', () => {
  it('worked example: net 9562 with 10% + 500 fixed', () => {
    const r = rule({
      id: 'a',
      splits: [
        { recipientId: 'r1', percentage: 10 },
        { recipientId: 'r2', amountCents: 500 },
      ],
    });
    assert.deepEqual(computeSplit(9562, r), [
      { payee: { type: 'merchant' }, amountCents: 8106 },
      { payee: { type: 'recipient', id: 'r1' }, amountCents: 956 },
      { payee: { type: 'recipient', id: 'r2' }, amountCents: 500 },
    ]);
  });

  it('merchant takes all without a rule, remainder 0 is still listed, duplicates listed separately', () => {
    assert.deepEqual(computeSplit(9562, null), [{ payee: { type: 'merchant' }, amountCents: 9562 }]);
    const full = rule({ id: 'b', splits: [{ recipientId: 'r1', percentage: 60 }, { recipientId: 'r1', percentage: 40 }] });
    assert.deepEqual(computeSplit(101, full), [
      { payee: { type: 'merchant' }, amountCents: 1 }, // 60.6 -> 60, 40.4 -> 40: dust to merchant
      { payee: { type: 'recipient', id: 'r1' }, amountCents: 60 },
      { payee: { type: 'recipient', id: 'r1' }, amountCents: 40 },
    ]);
    const exact = rule({ id: 'c', splits: [{ recipientId: 'r1', amountCents: 100 }] });
    assert.deepEqual(computeSplit(100, exact), [
      { payee: { type: 'merchant' }, amountCents: 0 },
      { payee: { type: 'recipient', id: 'r1' }, amountCents: 100 },
    ]);
  });

  it('throws when shares do not fit or the rule is malformed', () => {
    const r = rule({ id: 'a', splits: [{ recipientId: 'r1', percentage: 10 }, { recipientId: 'r2', amountCents: 500 }] });
    // net 555: 55 + 500 = 555 fits exactly; 554: 55 + 500 > 554.
    assert.equal(computeSplit(555, r)[0].amountCents, 0);
    assert.throws(() => computeSplit(554, r), /does not fit/);
    assert.throws(() => computeSplit(-1, null));
    assert.throws(() => computeSplit(1.5, null));
    assert.throws(() => computeSplit(100, rule({ id: 'x', splits: [{ recipientId: 'r', percentage: 0.001 }] })));
    assert.throws(() => computeSplit(100, rule({ id: 'x', splits: [{ recipientId: 'r', amountCents: 0 }] })));
  });

  it('property: lines never negative, sum exactly to net, floor of percentages, or throw iff not fitting', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.array(share, { minLength: 1, maxLength: 20 }), (net, splits) => {
        const r = rule({ id: 'p', splits });
        let expectedRecipients = 0n;
        const expected = splits.map((s) => {
          const v = 'percentage' in s ? (BigInt(net) * BigInt(Math.round(s.percentage * 100))) / 10000n : BigInt(s.amountCents);
          expectedRecipients += v;
          return Number(v);
        });
        const fits = expectedRecipients <= BigInt(net);
        assert.equal(ruleFits(net, r), fits);
        if (!fits) {
          assert.throws(() => computeSplit(net, r), /does not fit/);
          return;
        }
        const lines = computeSplit(net, r);
        assert.equal(lines.length, splits.length + 1);
        assert.deepEqual(lines[0].payee, { type: 'merchant' });
        assert.equal(lines.reduce((acc, l) => acc + l.amountCents, 0), net);
        for (const l of lines) assert.ok(Number.isSafeInteger(l.amountCents) && l.amountCents >= 0);
        assert.deepEqual(lines.slice(1).map((l) => l.amountCents), expected);
        assert.deepEqual(
          lines.slice(1).map((l) => (l.payee.type === 'recipient' ? l.payee.id : null)),
          splits.map((s) => s.recipientId),
        );
      }),
      RUNS,
    );
  });

  it('property: end to end gross -> fee -> split always sums to the gross', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000_000 }), method, fc.array(share, { minLength: 1, maxLength: 5 }), (gross, m, splits) => {
        const { feeCents, netCents } = computeFee(gross, m, DEFAULT_FEE_SCHEDULE);
        const chosen = selectRule([rule({ id: 'x', splits })], { amountCents: gross, method: m, netCents });
        const lines = computeSplit(netCents, chosen);
        assert.equal(feeCents + lines.reduce((acc, l) => acc + l.amountCents, 0), gross);
      }),
      RUNS,
    );
  });
});

describe('split: selectRule', () => {
  const sale = { amountCents: 10_000, method: 'credit_card' as const, netCents: 9562 };

  it('picks the lowest priority, ties by createdAt then id, regardless of input order', () => {
    const p5 = rule({ id: 'p5', priority: 5 });
    const p1late = rule({ id: 'p1late', priority: 1, createdAt: '2026-03-01T00:00:00.000Z' });
    const p1early = rule({ id: 'p1early', priority: 1, createdAt: '2026-02-01T00:00:00.000Z' });
    const p1earlyB = rule({ id: 'p1earlyB', priority: 1, createdAt: '2026-02-01T00:00:00.000Z' });
    assert.equal(selectRule([p5, p1late, p1earlyB, p1early], sale)?.id, 'p1early');
    assert.equal(selectRule([p5, p1late], sale)?.id, 'p1late');
    // Compared as instants, not strings: 00:30+03:00 is 2026-01-31T21:30Z, earlier than p1early
    // although it sorts later as a string.
    const offset = rule({ id: 'offset', priority: 1, createdAt: '2026-02-01T00:30:00.000+03:00' });
    assert.equal(selectRule([p1early, offset], sale)?.id, 'offset');
    // Same instant: falls back to string order (sub-millisecond digits), then id.
    const micro1 = rule({ id: 'z', priority: 1, createdAt: '2026-02-01T00:00:00.000001Z' });
    const micro2 = rule({ id: 'a', priority: 1, createdAt: '2026-02-01T00:00:00.000002Z' });
    assert.equal(selectRule([micro2, micro1], sale)?.id, 'z');
  });

  it('skips inactive rules, non-matching conditions, and rules that do not fit', () => {
    const inactive = rule({ id: 'inactive', priority: 0, active: false });
    const pixOnly = rule({ id: 'pix', priority: 1, conditions: { method: 'pix' } });
    const tooBig = rule({ id: 'big', priority: 2, splits: [{ recipientId: 'r', amountCents: 9563 }] });
    const exactFit = rule({ id: 'exact', priority: 3, splits: [{ recipientId: 'r', amountCents: 9562 }] });
    assert.equal(selectRule([inactive, pixOnly, tooBig, exactFit], sale)?.id, 'exact');
    assert.equal(selectRule([inactive, pixOnly, tooBig], sale), null);
    assert.equal(selectRule([], sale), null);
    assert.equal(selectRule([pixOnly], { ...sale, method: 'pix' })?.id, 'pix');
  });

  it('min/max bounds are inclusive on the gross amount', () => {
    const band = rule({ id: 'band', conditions: { minAmount: 10_000, maxAmount: 20_000 } });
    assert.equal(selectRule([band], { ...sale, amountCents: 10_000 })?.id, 'band');
    assert.equal(selectRule([band], { ...sale, amountCents: 20_000 })?.id, 'band');
    assert.equal(selectRule([band], { ...sale, amountCents: 9_999, netCents: 9_000 }), null);
    assert.equal(selectRule([band], { ...sale, amountCents: 20_001 }), null);
    // Bounds are on the gross, not the net: net 9562 is below minAmount yet matches.
    assert.equal(selectRule([rule({ id: 'g', conditions: { minAmount: 9_600 } })], sale)?.id, 'g');
  });

  it('rejects impossible sales', () => {
    assert.throws(() => selectRule([], { amountCents: 100, method: 'pix', netCents: 101 }));
    assert.throws(() => selectRule([], { amountCents: -1, method: 'pix', netCents: 0 }));
    assert.throws(() => selectRule([], { amountCents: 100, method: 'boleto' as PaymentMethod, netCents: 1 }));
  });

  it('property: agrees with a naive reference and is independent of input order', () => {
    const dates = ['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z', '2026-06-01T12:00:00.000Z'];
    const ruleArb = (id: string) =>
      fc.record({
        id: fc.constant(id),
        priority: fc.integer({ min: 0, max: 3 }),
        createdAt: fc.constantFrom(...dates),
        active: fc.boolean(),
        conditions: fc.option(
          fc.record(
            {
              method: method,
              minAmount: fc.integer({ min: 0, max: 20_000 }),
              maxAmount: fc.integer({ min: 0, max: 20_000 }),
            },
            { requiredKeys: [] },
          ),
          { nil: undefined },
        ),
        splits: fc.array(share, { minLength: 1, maxLength: 3 }),
      });
    const rulesArb = fc
      .integer({ min: 0, max: 8 })
      .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => ruleArb(`rule-${String.fromCharCode(97 + i)}`))));
    fc.assert(
      fc.property(
        rulesArb,
        fc.integer({ min: 1, max: 20_000 }),
        method,
        fc.integer({ min: 0, max: 10_000 }),
        fc.nat(),
        (rulesRaw, gross, m, netBps, seed) => {
          const rules = rulesRaw.map((r): SplitRule => {
            const { conditions, ...rest } = r;
            return conditions === undefined ? rest : { ...rest, conditions };
          });
          const net = Math.floor((gross * netBps) / 10_000);
          const s = { amountCents: gross, method: m, netCents: net };
          const eligible = rules.filter((r) => {
            const c = r.conditions ?? {};
            if (!r.active) return false;
            if (c.method !== undefined && c.method !== m) return false;
            if (c.minAmount !== undefined && gross < c.minAmount) return false;
            if (c.maxAmount !== undefined && gross > c.maxAmount) return false;
            let used = 0;
            for (const sh of r.splits) {
              used += 'percentage' in sh ? Math.floor((net * Math.round(sh.percentage * 100)) / 10_000) : sh.amountCents;
            }
            return used <= net;
          });
          const key = (r: SplitRule) => [r.priority, Date.parse(r.createdAt), r.id] as const;
          const best = eligible.reduce<SplitRule | null>((acc, r) => {
            if (acc === null) return r;
            const [a, b] = [key(r), key(acc)];
            for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? r : acc;
            return acc;
          }, null);
          const shuffled = [...rules];
          let x = seed;
          for (let i = shuffled.length - 1; i > 0; i--) {
            x = (x * 1103515245 + 12345) % 2147483648;
            const j = x % (i + 1);
            [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
          }
          assert.equal(selectRule(rules, s)?.id ?? null, best?.id ?? null);
          assert.equal(selectRule(shuffled, s)?.id ?? null, best?.id ?? null);
        },
      ),
      RUNS,
    );
  });
});

describe('split: validateSplitRuleShape', () => {
  const base = { priority: 10, splits: [{ recipientId: 'r1', percentage: 10 }, { recipientId: 'r2', amountCents: 500 }] };
  const params = (r: unknown) => validateSplitRuleShape(r).map((e) => e.param);

  it('accepts valid shapes', () => {
    assert.deepEqual(validateSplitRuleShape(base), []);
    assert.deepEqual(
      validateSplitRuleShape({
        ...base,
        active: false,
        conditions: { method: 'pix', minAmount: 100, maxAmount: 100 },
        splits: [{ recipientId: 'a', percentage: 60.55 }, { recipientId: 'a', percentage: 39.45 }],
      }),
      [],
    );
    assert.deepEqual(params({ priority: 0, splits: Array.from({ length: 20 }, () => ({ recipientId: 'r', percentage: 5 })) }), []);
    assert.deepEqual(params({ priority: 1_000_000, splits: [{ recipientId: 'r', percentage: 100 }] }), []);
  });

  it('names the offending param for each violation', () => {
    assert.deepEqual(params(null), ['rule']);
    assert.deepEqual(params({ splits: base.splits }), ['priority']);
    for (const p of [-1, 1.5, 1_000_001, '1']) assert.deepEqual(params({ ...base, priority: p }), ['priority']);
    assert.deepEqual(params({ ...base, active: 'yes' }), ['active']);
    assert.deepEqual(params({ ...base, splits: [] }), ['splits']);
    assert.deepEqual(params({ ...base, splits: 'x' }), ['splits']);
    assert.deepEqual(params({ ...base, splits: Array.from({ length: 21 }, () => ({ recipientId: 'r', amountCents: 1 })) }), ['splits']);
    assert.deepEqual(params({ ...base, splits: [{ recipientId: 'r', percentage: 10, amountCents: 5 }] }), ['splits[0]']);
    assert.deepEqual(params({ ...base, splits: [base.splits[0], { recipientId: 'r' }] }), ['splits[1]']);
    assert.deepEqual(params({ ...base, splits: [base.splits[0], 'x'] }), ['splits[1]']);
    assert.deepEqual(params({ ...base, splits: [{ recipientId: '', percentage: 1 }] }), ['splits[0].recipientId']);
    for (const p of [0, -5, 100.01, 1.234, Number.NaN, '10']) {
      assert.deepEqual(params({ ...base, splits: [{ recipientId: 'r', percentage: p }] }), ['splits[0].percentage'], String(p));
    }
    for (const a of [0, -1, 1.5, '100', Number.MAX_SAFE_INTEGER + 1]) {
      assert.deepEqual(params({ ...base, splits: [{ recipientId: 'r', amountCents: a }] }), ['splits[0].amountCents'], String(a));
    }
    assert.deepEqual(params({ ...base, splits: [{ recipientId: 'a', percentage: 60 }, { recipientId: 'b', percentage: 40.01 }] }), ['splits']);
    assert.deepEqual(params({ ...base, conditions: { minAmount: 101, maxAmount: 100 } }), ['conditions.minAmount']);
    assert.deepEqual(params({ ...base, conditions: { minAmount: -1 } }), ['conditions.minAmount']);
    assert.deepEqual(params({ ...base, conditions: { maxAmount: 1.5 } }), ['conditions.maxAmount']);
    assert.deepEqual(params({ ...base, conditions: { method: 'boleto' } }), ['conditions.method']);
    assert.deepEqual(params({ ...base, conditions: 'pix' }), ['conditions']);
  });

  it('property: percentage sets are accepted iff they sum to at most 100%', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 4000 }), { minLength: 1, maxLength: 20 }), (bpsList) => {
        const r = { priority: 1, splits: bpsList.map((b, i) => ({ recipientId: `r${i}`, percentage: b / 100 })) };
        const total = bpsList.reduce((a, b) => a + b, 0);
        assert.deepEqual(params(r), total <= 10_000 ? [] : ['splits']);
      }),
      RUNS,
    );
  });
});

describe('split: prorateReduction', () => {
  it('worked examples', () => {
    assert.deepEqual(prorateReduction([8106, 956, 500], 9562, 9562), [8106, 956, 500]);
    // half refund: 956*4781/9562 = 478, 500*4781/9562 = 250, merchant takes the rest
    assert.deepEqual(prorateReduction([8106, 956, 500], 9562, 4781), [4053, 478, 250]);
    assert.deepEqual(prorateReduction([8106, 956, 500], 9562, 1), [1, 0, 0]);
    assert.deepEqual(prorateReduction([8106, 956, 500], 9562, 0), [0, 0, 0]);
    assert.deepEqual(prorateReduction([0], 0, 0), [0]);
    // Merchant has nothing to absorb the rounding: excess goes to the largest fraction, lower index on ties.
    assert.deepEqual(prorateReduction([0, 1, 1], 2, 1), [0, 1, 0]);
    assert.deepEqual(prorateReduction([0, 1, 2], 3, 2), [0, 1, 1]); // floors 0,1 (fractions 2/3, 1/3)
    assert.deepEqual(prorateReduction([0, 1, 2], 3, 1), [0, 0, 1]); // fractions 1/3 < 2/3: largest wins over lower index
    assert.deepEqual(prorateReduction([0, 3, 3, 3], 9, 5), [0, 2, 2, 1]);
  });

  it('rejects inconsistent input', () => {
    assert.throws(() => prorateReduction([], 0, 0));
    assert.throws(() => prorateReduction([1, 2], 4, 1));
    assert.throws(() => prorateReduction([1, 2], 3, 4));
    assert.throws(() => prorateReduction([1, -1], 0, 0));
    assert.throws(() => prorateReduction([1.5, 1.5], 3, 1));
  });

  it('property: sums exactly, never negative, never beyond a receivable', () => {
    const arb = fc
      .array(fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 1_000_000_000 })), { minLength: 1, maxLength: 21 })
      .chain((amounts) => {
        const total = amounts.reduce((a, b) => a + b, 0);
        return fc.tuple(fc.constant(amounts), fc.constant(total), fc.integer({ min: 0, max: total }));
      });
    fc.assert(
      fc.property(arb, ([amounts, total, reduction]) => {
        const r = prorateReduction(amounts, total, reduction);
        assert.equal(r.length, amounts.length);
        assert.equal(r.reduce((a, b) => a + b, 0), reduction);
        r.forEach((x, i) => {
          assert.ok(Number.isSafeInteger(x) && x >= 0 && x <= amounts[i]);
          if (i > 0 && total > 0) {
            const floor = Number((BigInt(amounts[i]) * BigInt(reduction)) / BigInt(total));
            assert.ok(x === floor || x === floor + 1);
          }
        });
        if (reduction === total) assert.deepEqual(r, amounts);
      }),
      RUNS,
    );
  });
});

// Issue 26: the platform's balance at the PSP shared among payouts, oldest first.

describe('payouts against the PSP balance', () => {
  const candidates = fc.array(fc.integer({ min: 1, max: 10_000_000 }), { maxLength: 40 }).map((amounts) => amounts.map((amount, i) => ({ id: `stl_${i}`, amount })));

  it('pays a prefix, oldest first, never more than the balance; the rest is held; nothing lost or doubled', () => {
    fc.assert(fc.property(fc.integer({ min: -1_000_000, max: 100_000_000 }), candidates, (available, list) => {
      const { pay, hold, left } = allocateBalance(available, list);
      assert.deepEqual([...pay, ...hold], list.map((c) => c.id), 'every settlement once, in order');
      const paid = list.filter((c) => pay.includes(c.id)).reduce((s, c) => s + c.amount, 0);
      assert.ok(paid <= Math.max(available, 0));
      assert.equal(left, Math.max(available, 0) - paid);
      // The first held one did not fit: nobody younger was paid before it.
      if (hold.length > 0) assert.ok(list[pay.length].amount > left);
    }));
  });

  it('a balance that fits only some: the oldest are paid, the first that does not fit and every younger one are held', () => {
    const r = allocateBalance(1_000, [{ id: 'a', amount: 400 }, { id: 'b', amount: 500 }, { id: 'c', amount: 200 }, { id: 'd', amount: 50 }]);
    assert.deepEqual(r, { pay: ['a', 'b'], hold: ['c', 'd'], left: 100 });
    assert.deepEqual(allocateBalance(0, [{ id: 'a', amount: 1 }]), { pay: [], hold: ['a'], left: 0 });
    assert.throws(() => allocateBalance(10, [{ id: 'a', amount: 0 }]), RangeError);
    assert.throws(() => allocateBalance(10.5, []), RangeError);
  });

  it('a payout never exceeds what its settlement holds', () => {
    assert.equal(assertPayoutAmount('stl_1', 750, 750, 750), 750);
    for (const [payout, amount, sum] of [[751, 750, 750], [750, 750, 749], [0, 0, 0], [750, 751, 750], [1.5, 2, 2]]) {
      assert.throws(() => assertPayoutAmount('stl_1', payout, amount, sum), PayoutExceedsSettlement, `${payout} of ${amount}/${sum}`);
    }
    fc.assert(fc.property(fc.integer({ min: 1, max: 1e12 }), fc.integer({ min: 1, max: 1e12 }), (payout, held) => {
      if (payout === held) assert.equal(assertPayoutAmount('s', payout, held, held), payout);
      else if (payout > held) assert.throws(() => assertPayoutAmount('s', payout, held, held), PayoutExceedsSettlement);
    }));
  });
});
