import { createHmac, timingSafeEqual } from 'node:crypto';

// Adyen's HMAC signature of a standard notification item (docs.adyen.com, "Verify HMAC
// signatures"): HMAC-SHA256, keyed with the hex-decoded HMAC key, over
//   pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success
// (a missing field is the empty string), base64, in `additionalData.hmacSignature`.

export interface SignedFields {
  pspReference?: unknown;
  originalReference?: unknown;
  merchantAccountCode?: unknown;
  merchantReference?: unknown;
  amount?: { value?: unknown; currency?: unknown } | null;
  eventCode?: unknown;
  success?: unknown;
}

// The signed fields are strings, numbers or booleans; anything else (absent) signs as ''.
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');

export function signingString(item: SignedFields): string {
  return [item.pspReference, item.originalReference, item.merchantAccountCode, item.merchantReference, item.amount?.value, item.amount?.currency, item.eventCode, item.success].map(text).join(':');
}

export function hmacSignature(hexKey: string, item: SignedFields): string {
  return createHmac('sha256', Buffer.from(hexKey, 'hex')).update(signingString(item), 'utf8').digest('base64');
}

// Constant-time comparison of the item's signature with ours.
export function verifyHmac(hexKey: string, item: SignedFields, signature: unknown): boolean {
  if (typeof signature !== 'string' || signature.length === 0 || signature.length > 200) return false;
  const expected = Buffer.from(hmacSignature(hexKey, item), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export const HMAC_KEY = /^(?:[0-9A-Fa-f]{2}){16,128}$/;
