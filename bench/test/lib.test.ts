// The bench's own ids and dates (lib.ts), for rows it loads with SQL: the server's public id
// format, increasing, and São Paulo's calendar date.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, benchId, lsnBytes, saoPauloDate } from '../lib.ts';

// A prefix, then 26 lowercase Crockford base32 characters (no i, l, o, u).
const PUBLIC_ID = /^rcv_[0-9a-hjkmnp-tv-z]{26}$/;
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const timeOf = (id: string) => [...id.slice(4, 14)].reduce((ms, c) => ms * 32 + CROCKFORD.indexOf(c), 0);

test('benchId: the public id format, its time part the given millisecond, strictly increasing', () => {
  const ms = Date.parse('2026-11-23T12:00:00.000Z');
  const ids = Array.from({ length: 5000 }, (_, i) => benchId('rcv_', ms + Math.floor(i / 1000)));
  for (const id of ids) assert.match(id, PUBLIC_ID);
  assert.equal(timeOf(ids[0]), ms);
  assert.equal(timeOf(ids[4999]), ms + 4);
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1] < ids[i], `${ids[i - 1]} < ${ids[i]}`);
  // A clock that steps back does not make a smaller id.
  assert.ok(benchId('rcv_', ms - 60_000) > ids[4999]);
});

test('saoPauloDate: UTC-3, so 02:59 UTC is still the day before; addDays crosses months and years', () => {
  assert.equal(saoPauloDate(Date.parse('2026-03-01T02:59:59.999Z')), '2026-02-28');
  assert.equal(saoPauloDate(Date.parse('2026-03-01T03:00:00.000Z')), '2026-03-01');
  assert.equal(addDays('2026-03-01', -1), '2026-02-28');
  assert.equal(addDays('2025-12-31', 1), '2026-01-01');
  assert.equal(addDays('2026-01-10', -59), '2025-11-12');
});

test('lsnBytes: an LSN\'s two 32-bit halves, so the WAL between two positions is their difference', () => {
  assert.equal(lsnBytes('0/0'), 0n);
  assert.equal(lsnBytes('0/16B3748'), 0x16b3748n);
  assert.equal(lsnBytes('16/B374D848'), 0x16n * 2n ** 32n + 0xb374d848n);
  // Across the low half's wrap: 1/00000010 is 0x20 bytes after 0/FFFFFFF0.
  assert.equal(lsnBytes('1/00000010') - lsnBytes('0/FFFFFFF0'), 0x20n);
  for (const bad of ['', '16', '16/', 'x/1', '1/2/3', '123456789/0']) assert.throws(() => lsnBytes(bad), /not an LSN/);
});
