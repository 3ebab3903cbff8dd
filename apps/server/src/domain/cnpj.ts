// CNPJ validation, numeric and alphanumeric.
//
// Since July 2026 the Receita Federal issues alphanumeric CNPJs: the first 12
// characters (8 root + 4 branch) may be digits or uppercase letters A-Z, the
// last 2 remain numeric check digits. The check-digit algorithm is the classic
// modulo-11 one with each character valued as (charCode - 48), so digits keep
// their old values and old numeric CNPJs remain valid unchanged.
//
// Input handling decision: lowercase letters are accepted and uppercased. The
// Receita treats the identifier as case-insensitive in practice (it is printed
// uppercase) and rejecting "12abc..." typed by a user would only push the
// normalization onto every caller. The canonical form is always uppercase.

const STRIP_RE = /[./\-\s]/g;
const BASE_RE = /^[0-9A-Z]{12}$/;
const CANONICAL_RE = /^[0-9A-Z]{12}[0-9]{2}$/;

const DV1_WEIGHTS = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const;
const DV2_WEIGHTS = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const;

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}

function checkDigit(chars: string, weights: readonly number[]): number {
  assert(chars.length === weights.length, 'check digit input length matches weights');
  let sum = 0;
  for (let i = 0; i < chars.length; i++) {
    const value = chars.charCodeAt(i) - 48;
    // '0'..'9' -> 0..9, 'A'..'Z' -> 17..42; anything else means the caller skipped validation.
    assert((value >= 0 && value <= 9) || (value >= 17 && value <= 42), 'cnpj char in [0-9A-Z]');
    sum += value * weights[i];
  }
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

function strip(input: string): string {
  return input.replace(STRIP_RE, '').toUpperCase();
}

/**
 * Computes the two check digits for a 12-character CNPJ base (root + branch).
 * Throws if the base is not 12 chars of [0-9A-Z] (lowercase is uppercased).
 */
export function cnpjCheckDigits(first12: string): string {
  const base = first12.toUpperCase();
  if (!BASE_RE.test(base)) {
    throw new Error('cnpjCheckDigits: base must be 12 characters of [0-9A-Z]');
  }
  const dv1 = checkDigit(base, DV1_WEIGHTS);
  const dv2 = checkDigit(base + String(dv1), DV2_WEIGHTS);
  assert(dv1 >= 0 && dv1 <= 9 && dv2 >= 0 && dv2 <= 9, 'check digits are single digits');
  return `${dv1}${dv2}`;
}

/**
 * Returns the canonical 14-char uppercase CNPJ (no punctuation) or null if the
 * input is not a valid CNPJ. Only `.`, `/`, `-` and whitespace are stripped.
 */
export function normalizeCnpj(input: string): string | null {
  if (typeof input !== 'string') return null;
  const cnpj = strip(input);
  if (!CANONICAL_RE.test(cnpj)) return null;
  // 00000000000000 passes the modulo-11 check; all-same sequences are never issued.
  if (/^(.)\1{13}$/.test(cnpj)) return null;
  if (cnpjCheckDigits(cnpj.slice(0, 12)) !== cnpj.slice(12)) return null;
  return cnpj;
}

export function isValidCnpj(input: string): boolean {
  return normalizeCnpj(input) !== null;
}

// Log-safe masked form: keeps the first 2 root characters and the 4 branch
// characters, e.g. 12.***.***/0001-** (written as a line comment because that
// example would close a block comment). Never echoes arbitrary input: anything
// that is not 14 chars of [0-9A-Z] after stripping is fully masked. Check
// digits are not verified so that malformed-but-shaped values can still be
// correlated in logs.
export function maskCnpj(cnpj: string): string {
  const s = typeof cnpj === 'string' ? strip(cnpj) : '';
  if (!/^[0-9A-Z]{14}$/.test(s)) return '**.***.***/****-**';
  return `${s.slice(0, 2)}.***.***/${s.slice(8, 12)}-**`;
}
