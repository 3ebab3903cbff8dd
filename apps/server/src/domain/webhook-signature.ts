import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { systemClock } from '../clock.js';

// Standard Webhooks (standardwebhooks.com) signatures: HMAC-SHA256 over "id.timestamp.body"
// with the bytes of the base64 secret after `whsec_`, sent as `v1,<base64>`; several
// space-separated signatures while a rotated secret is still honoured.
export const SECRET_PREFIX = 'whsec_';

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

function secretBytes(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new WebhookVerificationError('The secret must start with whsec_.');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

// The body is signed as bytes: a Buffer (or Uint8Array) as received, a string as its UTF-8 encoding.
export function sign(secret: string, msgId: string, timestampSeconds: number, body: string | Uint8Array): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${msgId}.${timestampSeconds}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

export function signatureHeader(secrets: string[], msgId: string, timestampSeconds: number, body: string): string {
  return secrets.map((s) => sign(s, msgId, timestampSeconds, body)).join(' ');
}

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const h = headers as Record<string, string | string[] | undefined>;
  const v = h[name] ?? h[name.toLowerCase()] ?? Object.entries(h).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(v) ? v[0] : v;
}

// Verifies a delivery (what a receiver runs: the server itself never verifies, so its default "now"
// is the system clock's; tests pass `nowSeconds`). `rawBody` must be the exact bytes received: a re-serialized JSON object
// has different bytes and never verifies, which is why an object is refused outright.
export function verify(rawBody: string | Buffer | Uint8Array, headers: Headers, secret: string | string[], toleranceSeconds = 300, nowSeconds = Math.floor(systemClock.nowMs() / 1000)): { id: string; timestamp: number } {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new WebhookVerificationError('Pass the raw request body (string, Buffer or Uint8Array), not parsed JSON: signatures cover the exact bytes sent.');
  }
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sigs = header(headers, 'webhook-signature');
  if (!id || !ts || !sigs) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header.');
  if (!/^[0-9]{1,12}$/.test(ts)) throw new WebhookVerificationError('Invalid webhook-timestamp.');
  const timestamp = Number(ts);
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) throw new WebhookVerificationError('The webhook-timestamp is outside the tolerance: possible replay.');
  const candidates = sigs.split(' ').filter((s) => s.startsWith('v1,')).map((s) => Buffer.from(s.slice(3), 'base64'));
  for (const s of Array.isArray(secret) ? secret : [secret]) {
    const expected = Buffer.from(sign(s, id, timestamp, rawBody).slice(3), 'base64');
    for (const c of candidates) {
      if (c.length === expected.length && timingSafeEqual(c, expected)) return { id, timestamp };
    }
  }
  throw new WebhookVerificationError('No signature matches the secret.');
}
