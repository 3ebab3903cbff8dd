import { randomBytes } from 'node:crypto';

// Time-sortable ids (ULID layout, Crockford base32, 26 chars): 48 bits of milliseconds then
// 80 bits of randomness. Sorting by id sorts by creation time, which makes cursor pagination a
// plain index range. Within one millisecond the random part is incremented so ids created by
// this process stay strictly increasing.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export const ID_PREFIXES = {
  payment: 'pay_',
  refund: 'ref_',
  recipient: 'rcp_',
  splitRule: 'spr_',
  receivable: 'rcv_',
  settlement: 'stl_',
  event: 'evt_',
  webhookEndpoint: 'whe_',
  checkoutSession: 'cs_',
  token: 'tok_',
  account: 'acct_',
  apiKey: 'key_',
  job: 'job_',
  delivery: 'whd_',
  settlementRun: 'str_',
  admin: 'adm_',
  auditEntry: 'aud_',
  connectorAccount: 'cna_',
  notification: 'ntf_',
  dispute: 'dp_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

let lastMs = -1;
const lastRandom = new Uint8Array(10);

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits -> 16 base32 chars.
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

// `nowMs` from the caller's Clock (clock.ts).
export function ulid(nowMs: number): string {
  if (nowMs <= lastMs) {
    // Same (or earlier, clock stepped back) millisecond: increment the random part.
    for (let i = lastRandom.length - 1; i >= 0; i--) {
      if (lastRandom[i] === 255) { lastRandom[i] = 0; continue; }
      lastRandom[i]++;
      break;
    }
    nowMs = lastMs;
  } else {
    lastRandom.set(randomBytes(10));
    lastMs = nowMs;
  }
  return encodeTime(nowMs) + encodeRandom(lastRandom);
}

export function newId(kind: IdKind, nowMs: number): string {
  return ID_PREFIXES[kind] + ulid(nowMs);
}

// The smallest id of this kind at `ms`: ids below it were made before (purges compare ids,
// which the primary key index already orders, instead of keeping a timestamp index).
export function idFloor(kind: IdKind, ms: number): string {
  return ID_PREFIXES[kind] + encodeTime(ms) + '0'.repeat(16);
}

export function hasPrefix(kind: IdKind, id: string): boolean {
  return id.startsWith(ID_PREFIXES[kind]);
}
