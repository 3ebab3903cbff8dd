import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// Admin passwords are hashed with scrypt (memory-hard) and a random 16-byte salt. The stored
// form names its own parameters, `scrypt$N$r$p$salt$hash` (salt and hash base64url), so the cost
// can be raised later without invalidating existing hashes.
//
// Cost: N = 2^15, r = 8, p = 1 (32 MiB, ~0.1-0.2 s per hash on one core). Logins are rare and
// throttled; the price is paid on purpose.
export const SCRYPT_PARAMS = Object.freeze({ N: 32_768, r: 8, p: 1 });
const KEY_LENGTH = 64;
const SALT_BYTES = 16;
// Bounds on parameters read back from the store: a corrupted or hostile row must not make us
// allocate gigabytes.
const MAX_N = 1 << 20;
const MAX_R = 32;
const MAX_P = 16;

export const MIN_PASSWORD_LENGTH = 12;
// scrypt takes any length, but nobody needs more, and a megabyte password is just a slow request.
export const MAX_PASSWORD_LENGTH = 1024;

function scrypt(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(password.normalize('NFKC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

const maxmem = (N: number, r: number, p: number) => 128 * N * r * p + 2 * 1024 * 1024 + 128 * r * p;

export async function hashPassword(password: string): Promise<string> {
  const { N, r, p } = SCRYPT_PARAMS;
  const salt = randomBytes(SALT_BYTES);
  const hash = await scrypt(password, salt, KEY_LENGTH, { N, r, p, maxmem: maxmem(N, r, p) });
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

// Constant-time comparison of the derived key; false (never an exception) for a malformed hash.
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map((s) => (/^[0-9]{1,8}$/.test(s) ? Number(s) : NaN));
  if (!(N >= 2 && N <= MAX_N && (N & (N - 1)) === 0 && r >= 1 && r <= MAX_R && p >= 1 && p <= MAX_P)) return false;
  const salt = Buffer.from(parts[4], 'base64url');
  const expected = Buffer.from(parts[5], 'base64url');
  if (salt.length < 8 || expected.length < 16) return false;
  const actual = await scrypt(password, salt, expected.length, { N, r, p, maxmem: maxmem(N, r, p) });
  return timingSafeEqual(actual, expected);
}

// Verified against when the email is unknown, so an unknown email costs as much time as a
// wrong password and the timing does not tell which one it was.
let dummyHash: Promise<string> | null = null;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(16).toString('base64url'));
  return dummyHash;
}
