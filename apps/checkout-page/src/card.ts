// Card checks made before anything is sent (the server checks again on POST /v1/tokens).
// The same Luhn check, brand prefixes and CVC check as the server's tokenization (one source:
// the server's domain module, which imports nothing and bundles into the page as it is).
import { cardBrand, cvcValid, luhnValid, type CardBrand } from '../../server/src/domain/card';

export type Brand = CardBrand;
export { cvcValid, luhnValid };
export const brandOf = cardBrand;

export const BRAND_NAMES: Record<Brand, string> = { visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express', elo: 'Elo', hipercard: 'Hipercard', unknown: '' };

export function digitsOf(value: string): string {
  return value.replace(/\D/g, '');
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
