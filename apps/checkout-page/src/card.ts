// Card checks made before anything is sent (the server checks again on POST /v1/tokens).
export type Brand = 'visa' | 'mastercard' | 'amex' | 'elo' | 'hipercard' | 'unknown';

export const BRAND_NAMES: Record<Brand, string> = { visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express', elo: 'Elo', hipercard: 'Hipercard', unknown: '' };

export function digitsOf(value: string): string {
  return value.replace(/\D/g, '');
}

export function luhnValid(digits: string): boolean {
  if (!/^[0-9]{12,19}$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

// The same prefixes as the server (apps/server/src/domain/card.ts).
export function brandOf(digits: string): Brand {
  if (/^(4011|4312|4389|4514|4576|5041|5066|5067|509|6277|6362|6363|650|6516|6550)/.test(digits)) return 'elo';
  if (/^(606282|3841)/.test(digits)) return 'hipercard';
  if (/^4/.test(digits)) return 'visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6][0-9]|7[01]|720))/.test(digits)) return 'mastercard';
  if (/^3[47]/.test(digits)) return 'amex';
  return 'unknown';
}

export function maxDigits(brand: Brand): number {
  return brand === 'amex' ? 15 : 19;
}

// 4-6-5 for American Express, groups of four otherwise.
export function groupNumber(digits: string): string {
  const groups = brandOf(digits) === 'amex' ? [4, 6, 5] : [4, 4, 4, 4, 3];
  const out: string[] = [];
  let i = 0;
  for (const size of groups) {
    if (i >= digits.length) break;
    out.push(digits.slice(i, i + size));
    i += size;
  }
  return out.join(' ');
}

export function formatExpiry(value: string): string {
  const d = digitsOf(value).slice(0, 4);
  return d.length > 2 ? `${d.slice(0, 2)}/${d.slice(2)}` : d;
}

// { month, year } when "MM/AA" is a month not yet past, null otherwise.
export function parseExpiry(value: string, now = new Date()): { month: number; year: number } | null {
  const m = /^(\d{2})\/(\d{2})$/.exec(value.trim());
  if (!m) return null;
  const month = Number(m[1]);
  const year = 2000 + Number(m[2]);
  if (month < 1 || month > 12) return null;
  const nowYear = now.getFullYear();
  if (year < nowYear || (year === nowYear && month < now.getMonth() + 1)) return null;
  return { month, year };
}

export function cvcLength(brand: Brand): number {
  return brand === 'amex' ? 4 : 3;
}
