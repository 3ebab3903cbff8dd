// Card checks for tokenization. The card number lives only in this request's memory: it is
// never stored, logged or echoed back (only brand and last4 leave this module).
export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'elo' | 'hipercard' | 'unknown';
export type TestOutcome = 'approve' | 'decline' | 'insufficient_funds' | 'provider_error' | 'provider_timeout';

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

export function cardBrand(digits: string): CardBrand {
  if (/^(4011|4312|4389|4514|4576|5041|5066|5067|509|6277|6362|6363|650|6516|6550)/.test(digits)) return 'elo';
  if (/^(606282|3841)/.test(digits)) return 'hipercard';
  if (/^4/.test(digits)) return 'visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6][0-9]|7[01]|720))/.test(digits)) return 'mastercard';
  if (/^3[47]/.test(digits)) return 'amex';
  return 'unknown';
}

// Sandbox test cards (Stripe's well-known numbers, so integrators recognise them). Any other
// Luhn-valid number approves in sandbox.
export const TEST_CARDS: Record<string, TestOutcome> = {
  '4242424242424242': 'approve',
  '5555555555554444': 'approve',
  '4000000000000002': 'decline',
  '4000000000009995': 'insufficient_funds',
  '4000000000000119': 'provider_error',
  '4000000000000127': 'provider_timeout',
};

// Ready tokens usable without calling POST /v1/tokens, in sandbox only, reusable.
export const READY_TOKENS: Record<string, { brand: CardBrand; last4: string; outcome: TestOutcome }> = {
  tok_visa: { brand: 'visa', last4: '4242', outcome: 'approve' },
  tok_mastercard: { brand: 'mastercard', last4: '4444', outcome: 'approve' },
  tok_declined: { brand: 'visa', last4: '0002', outcome: 'decline' },
  tok_insufficient_funds: { brand: 'visa', last4: '9995', outcome: 'insufficient_funds' },
  tok_provider_error: { brand: 'visa', last4: '0119', outcome: 'provider_error' },
  tok_provider_timeout: { brand: 'visa', last4: '0127', outcome: 'provider_timeout' },
};

export function expiryValid(month: number, year: number, now: Date): boolean {
  if (!Number.isInteger(month) || month < 1 || month > 12) return false;
  if (!Number.isInteger(year) || year < 2000 || year > 2100) return false;
  const nowYear = now.getUTCFullYear();
  const nowMonth = now.getUTCMonth() + 1;
  return year > nowYear || (year === nowYear && month >= nowMonth);
}

export function cvcValid(cvc: string, brand: CardBrand): boolean {
  return brand === 'amex' ? /^[0-9]{4}$/.test(cvc) : /^[0-9]{3}$/.test(cvc);
}
