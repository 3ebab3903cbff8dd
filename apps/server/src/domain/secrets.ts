import { createHash, timingSafeEqual } from 'node:crypto';

// Whether two secrets are the same, in constant time: both sides are hashed (SHA-256) first, so
// the comparison never depends on where they differ nor shows either one's length. For a client
// secret, a metrics token, a CSRF token (passwords have their own, scrypt: admin/shared/passwords.ts).
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
