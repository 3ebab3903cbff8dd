import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import jsQRModule from 'jsqr';
import { hasError, isStaticPix, parsePix } from 'pix-utils';
import {
  MAX_PIX_AMOUNT_CENTS,
  buildPixBrCode,
  crc16ccittFalse,
  parsePixBrCode,
  pixTxidFromId,
  type PixBrCodeInput,
} from '../src/domain/pix.js';
import { qrMatrix, qrSvg } from '../src/domain/qr.js';

// jsqr is a CJS bundle whose typings declare an ES default export; under NodeNext the default
// import is module.exports, which is the function at runtime but typed as the namespace.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as typeof import('jsqr').default;

const base: PixBrCodeInput = {
  pixKey: '123e4567-e12b-12d1-a456-426655440000',
  amountCents: 1050,
  txid: 'PAY01JABCDEFGHJKMNPQRSTV',
  merchantName: 'Fulano de Tal',
  merchantCity: 'BRASILIA',
};

/** Independent decode with pix-utils; fails the test on any error it reports. */
function decodeWithPixUtils(code: string) {
  const parsed = parsePix(code);
  if (hasError(parsed)) assert.fail(`pix-utils rejected the BR Code: ${parsed.message} (${code})`);
  assert.ok(isStaticPix(parsed), `pix-utils did not see a static Pix: ${parsed.type}`);
  return parsed;
}

/** Rasterizes the module matrix (plus quiet zone) the way a camera would see it, then decodes. */
function decodeQr(text: string): string | undefined {
  const matrix = qrMatrix(text);
  const scale = 8;
  const quiet = 4;
  const dim = (matrix.length + 2 * quiet) * scale;
  const pixels = new Uint8ClampedArray(dim * dim * 4).fill(255);
  for (let y = 0; y < matrix.length; y++) {
    for (let x = 0; x < matrix.length; x++) {
      if (!matrix[y][x]) continue;
      for (let py = 0; py < scale; py++) {
        for (let px = 0; px < scale; px++) {
          const i = (((y + quiet) * scale + py) * dim + (x + quiet) * scale + px) * 4;
          pixels[i] = pixels[i + 1] = pixels[i + 2] = 0;
        }
      }
    }
  }
  return jsQR(pixels, dim, dim, { inversionAttempts: 'dontInvert' })?.data;
}

test('crc16ccittFalse matches the CRC-16/CCITT-FALSE check value', () => {
  assert.equal(crc16ccittFalse('123456789'), '29B1');
  assert.equal(crc16ccittFalse(''), 'FFFF');
  // Pads to 4 hex digits rather than printing e.g. "1D0".
  assert.match(crc16ccittFalse('A'), /^[0-9A-F]{4}$/);
});

test('buildPixBrCode lays out the fields in manual order', () => {
  const code = buildPixBrCode(base);
  const expectedBody =
    '000201' +
    '010212' +
    '2658' + '0014br.gov.bcb.pix' + '0136123e4567-e12b-12d1-a456-426655440000' +
    '52040000' +
    '5303986' +
    '540510.50' +
    '5802BR' +
    '5913Fulano de Tal' +
    '6008BRASILIA' +
    '6228' + '0524PAY01JABCDEFGHJKMNPQRSTV' +
    '6304';
  assert.equal(code.slice(0, -4), expectedBody);
  assert.equal(code.slice(-4), crc16ccittFalse(expectedBody));
});

test('amounts are formatted from integer centavos', () => {
  const amountField = (amountCents: number) => /5303986(54\d\d[0-9.]+)5802BR/.exec(buildPixBrCode({ ...base, amountCents }))?.[1];
  assert.equal(amountField(1), '54040.01');
  assert.equal(amountField(10), '54040.10');
  assert.equal(amountField(100), '54041.00');
  assert.equal(amountField(123456789), '54101234567.89');
  assert.equal(amountField(MAX_PIX_AMOUNT_CENTS), '54139999999999.99');
});

test('build -> parse round trip', () => {
  const code = buildPixBrCode({ ...base, description: 'Pedido 42' });
  assert.deepEqual(parsePixBrCode(code), {
    pixKey: base.pixKey,
    amountCents: 1050,
    txid: base.txid,
    merchantName: 'Fulano de Tal',
    merchantCity: 'BRASILIA',
  });
});

test('merchant name and city are folded to ASCII and truncated', () => {
  const code = buildPixBrCode({
    ...base,
    merchantName: 'Padaria São João & Confeitaria Ltda',
    merchantCity: 'São José dos Campos',
  });
  const parsed = parsePixBrCode(code);
  assert.equal(parsed.merchantName, 'Padaria Sao Joao & Confei');
  assert.equal(parsed.merchantName.length, 25);
  assert.equal(parsed.merchantCity, 'Sao Jose dos Ca');
  assert.match(code, /^[\x20-\x7E]+$/);
});

test('a long description is trimmed to fit field 26 instead of overflowing it', () => {
  const code = buildPixBrCode({ ...base, pixKey: 'k'.repeat(70), description: 'x'.repeat(200) });
  const field26 = /^000201010212(26(\d\d))/.exec(code);
  assert.ok(field26);
  assert.equal(Number(field26[2]), 99);
  decodeWithPixUtils(code);
});

test('pix-utils independently decodes our BR Code and verifies its CRC', () => {
  const code = buildPixBrCode({ ...base, description: 'Pedido 42' });
  const parsed = decodeWithPixUtils(code);
  assert.equal(parsed.pixKey, base.pixKey);
  assert.equal(parsed.transactionAmount, 10.5);
  assert.equal(parsed.txid, base.txid);
  assert.equal(parsed.merchantName, 'Fulano de Tal');
  assert.equal(parsed.merchantCity, 'BRASILIA');
  assert.equal(parsed.infoAdicional, 'Pedido 42');
  assert.equal(parsed.merchantCategoryCode, '0000');
  assert.equal(parsed.transactionCurrency, '986');
  assert.equal(parsed.countryCode, 'BR');

  // The same check must be able to fail: pix-utils rejects a code whose CRC we corrupt.
  const lastHex = code.at(-1) === '0' ? '1' : '0';
  const corrupted = code.slice(0, -1) + lastHex;
  const rejected = parsePix(corrupted);
  assert.ok(hasError(rejected));
  assert.match(rejected.message, /crc/i);
});

test('property: any valid amount/txid round-trips through both decoders with a valid CRC', () => {
  const txidArb = fc.stringMatching(/^[A-Za-z0-9]{1,25}$/);
  const amountArb = fc.integer({ min: 1, max: MAX_PIX_AMOUNT_CENTS });
  const keyArb = fc.oneof(
    fc.uuid(),
    fc.emailAddress().filter((e) => e.length <= 77),
    fc.stringMatching(/^\+55\d{11}$/),
    fc.stringMatching(/^\d{11}$/),
  );
  fc.assert(
    fc.property(amountArb, txidArb, keyArb, (amountCents, txid, pixKey) => {
      const code = buildPixBrCode({ ...base, amountCents, txid, pixKey });
      assert.equal(code.slice(-8, -4), '6304');
      assert.equal(crc16ccittFalse(code.slice(0, -4)), code.slice(-4));

      const ours = parsePixBrCode(code);
      assert.equal(ours.amountCents, amountCents);
      assert.equal(ours.txid, txid);
      assert.equal(ours.pixKey, pixKey);

      const theirs = decodeWithPixUtils(code);
      // Integer centavos are exact in a double up to 2^53, and the decimal string is what
      // pix-utils parses, so comparing against cents / 100 is exact here.
      assert.equal(theirs.transactionAmount, amountCents / 100);
      assert.equal(theirs.txid, txid);
      assert.equal(theirs.pixKey, pixKey);
    }),
    { numRuns: 300 },
  );
});

test('buildPixBrCode rejects bad inputs with RangeError', () => {
  const bad: Array<[string, Partial<PixBrCodeInput>]> = [
    ['zero amount', { amountCents: 0 }],
    ['negative amount', { amountCents: -100 }],
    ['fractional amount', { amountCents: 10.5 }],
    ['NaN amount', { amountCents: Number.NaN }],
    ['unsafe amount', { amountCents: Number.MAX_SAFE_INTEGER + 1 }],
    ['amount beyond field 54', { amountCents: MAX_PIX_AMOUNT_CENTS + 1 }],
    ['empty txid', { txid: '' }],
    ['long txid', { txid: 'A'.repeat(26) }],
    ['txid with dash', { txid: 'abc-123' }],
    ['txid with underscore', { txid: 'pay_123' }],
    ['empty key', { pixKey: '' }],
    ['long key', { pixKey: 'k'.repeat(78) }],
    ['non-ASCII key', { pixKey: 'joão@example.com' }],
    ['blank merchant name', { merchantName: '   ' }],
    ['non-ASCII-only city', { merchantCity: '北京' }],
  ];
  for (const [label, override] of bad) {
    assert.throws(() => buildPixBrCode({ ...base, ...override }), RangeError, label);
  }
  // Boundaries that must still be accepted.
  buildPixBrCode({ ...base, txid: 'A'.repeat(25), pixKey: 'k'.repeat(77), amountCents: 1 });
});

test('parsePixBrCode rejects bad CRC and malformed TLV', () => {
  const code = buildPixBrCode(base);
  const flipped = code.slice(0, -1) + (code.at(-1) === '0' ? '1' : '0');
  assert.throws(() => parsePixBrCode(flipped), /CRC/);
  // Tampering with the body (amount 10.50 -> 90.50) without fixing the CRC.
  assert.throws(() => parsePixBrCode(code.replace('540510.50', '540590.50')), /CRC/);
  assert.throws(() => parsePixBrCode(''), /Malformed/);
  assert.throws(() => parsePixBrCode('not a br code at all'), /Malformed/);

  // Length that overruns the payload, with a CRC that is otherwise correct.
  const overrun = '000201' + '5999abc' + '6304';
  assert.throws(() => parsePixBrCode(overrun + crc16ccittFalse(overrun)), /Malformed/);
  // Valid TLV + CRC but no Pix merchant account.
  const notPix = '000201' + '52040000' + '6304';
  assert.throws(() => parsePixBrCode(notPix + crc16ccittFalse(notPix)), /Not a Pix/);
  // Lowercase CRC hex is still accepted: some generators emit it.
  const lower = code.slice(0, -4) + code.slice(-4).toLowerCase();
  assert.equal(parsePixBrCode(lower).txid, base.txid);
});

test('pixTxidFromId keeps the last 25 chars of the ULID, uppercased', () => {
  assert.equal(pixTxidFromId('pay_01JABCDEFGHJKMNPQRSTVWXYZ0'), '1JABCDEFGHJKMNPQRSTVWXYZ0');
  assert.equal(pixTxidFromId('pay_01jabcdefghjkmnpqrstvwxyz0'), '1JABCDEFGHJKMNPQRSTVWXYZ0');
  const txid = pixTxidFromId('pay_01jabcdefghjkmnpqrstvwxyz0');
  assert.equal(txid.length, 25);
  // It must be usable as-is.
  assert.equal(parsePixBrCode(buildPixBrCode({ ...base, txid })).txid, txid);
  assert.throws(() => pixTxidFromId('pay_'), RangeError);
  assert.throws(() => pixTxidFromId('pay_01-abc'), RangeError);
});

test('the QR code decodes (jsqr) to exactly the BR Code', () => {
  const code = buildPixBrCode({ ...base, merchantName: 'Loja Exemplo', description: 'Pedido 42' });
  assert.equal(decodeQr(code), code);
  // Sanity-check the decoder path itself: a different payload must decode to something else.
  const other = buildPixBrCode({ ...base, amountCents: 1051 });
  assert.equal(decodeQr(other), other);
  assert.notEqual(decodeQr(other), code);
});

test('qrSvg is a well-formed, deterministic SVG with one path and a quiet zone', () => {
  const code = buildPixBrCode(base);
  const svg = qrSvg(code);
  assert.ok(svg.startsWith('<svg'));
  assert.ok(svg.endsWith('</svg>'));
  assert.match(svg, /xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(svg, /shape-rendering="crispEdges"/);
  assert.equal(svg.match(/<path\b/g)?.length, 1);
  assert.equal(svg.match(/<rect\b/g)?.length, 1);

  const size = qrMatrix(code).length;
  const dim = size + 8;
  assert.match(svg, new RegExp(`viewBox="0 0 ${dim} ${dim}"`));
  // Rasterize the SVG's own path (not qrMatrix) and decode it, so the test covers what a
  // browser would actually draw. The renderer only emits closed unit-height rectangles.
  const d = /<path[^>]* d="([^"]*)"/.exec(svg)?.[1] ?? '';
  assert.match(d, /^(?:M\d+ \d+h\d+v1h-\d+z)+$/);
  const scale = 8;
  const px = dim * scale;
  const pixels = new Uint8ClampedArray(px * px * 4).fill(255);
  let darkInPath = 0;
  for (const m of d.matchAll(/M(\d+) (\d+)h(\d+)v1h-(\d+)z/g)) {
    const [x, y, run, back] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
    assert.equal(back, run, `unclosed run: ${m[0]}`);
    assert.ok(x >= 4 && y >= 4 && x + run <= size + 4 && y < size + 4, `run intrudes on the quiet zone: ${m[0]}`);
    darkInPath += run;
    for (let py = y * scale; py < (y + 1) * scale; py++) {
      for (let pxl = x * scale; pxl < (x + run) * scale; pxl++) {
        const i = (py * px + pxl) * 4;
        pixels[i] = pixels[i + 1] = pixels[i + 2] = 0;
      }
    }
  }
  assert.equal(darkInPath, qrMatrix(code).flat().filter(Boolean).length);
  assert.equal(jsQR(pixels, px, px, { inversionAttempts: 'dontInvert' })?.data, code);

  assert.equal(qrSvg(code), svg); // cached
  assert.notEqual(qrSvg(buildPixBrCode({ ...base, amountCents: 1 })), svg);
});
