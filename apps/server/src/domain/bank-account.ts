// Brazilian bank account (payout destination) validation.
//
// Decisions:
// - All fields must be strings: bank codes and agencies carry meaningful
//   leading zeros ("001"), and account numbers can exceed 2^53.
// - No trimming or other leniency except the check-digit letter: the API
//   schema is the place to shape input, and silently rewriting a payout
//   destination is worse than rejecting it.
// - agency: 1-5 digits, optionally followed by "-D" where D is a digit or X
//   (Banco do Brasil prints agencies as NNNN-D and users copy them verbatim).
//   Lowercase x is normalized to X. The check digit is kept in `agency`
//   as-is; it is not verified because the algorithm is bank specific.
// - account: 1-20 digits, "-", check digit (digit or X, x normalized to X).
//   The check digit is not verified, for the same reason.
// - Unknown extra properties are ignored (the HTTP schema rejects them).
// - Error messages are static strings: they never echo the submitted values,
//   so they are safe to log and return even for the account number.

export type BankAccountType = 'checking' | 'savings' | 'payment';

export const BANK_ACCOUNT_TYPES: readonly BankAccountType[] = ['checking', 'savings', 'payment'];

export interface BankAccount {
  bankCode: string;
  agency: string;
  account: string;
  accountType: BankAccountType;
}

export interface ValidationError {
  param: string;
  message: string;
}

export type BankAccountValidation =
  | { ok: true; value: BankAccount }
  | { ok: false; errors: ValidationError[] };

const BANK_CODE_RE = /^[0-9]{3}$/;
const AGENCY_RE = /^[0-9]{1,5}(-[0-9X])?$/;
const ACCOUNT_RE = /^[0-9]{1,20}-[0-9X]$/;

// The same layouts for the HTTP schema, which sees the input before a lowercase x becomes X.
export const BANK_ACCOUNT_LAYOUT = {
  bankCode: { pattern: '^[0-9]{3}$', message: 'must be exactly 3 digits' },
  agency: { pattern: '^[0-9]{1,5}(-[0-9Xx])?$', message: 'must be 1-5 digits, optionally followed by "-" and a check digit (0-9 or X)' },
  account: { pattern: '^[0-9]{1,20}-[0-9Xx]$', message: 'must be 1-20 digits, "-" and a check digit (0-9 or X)' },
} as const;

function normalizeTrailingX(value: string): string {
  return value.endsWith('x') ? value.slice(0, -1) + 'X' : value;
}

export function validateBankAccount(input: unknown): BankAccountValidation {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, errors: [{ param: 'bankAccount', message: 'must be an object' }] };
  }
  const raw = input as Record<string, unknown>;
  const errors: ValidationError[] = [];

  const field = (name: keyof BankAccount): string | undefined => {
    const value = raw[name];
    if (value === undefined || value === null) {
      errors.push({ param: `bankAccount.${name}`, message: 'is required' });
      return undefined;
    }
    if (typeof value !== 'string') {
      errors.push({ param: `bankAccount.${name}`, message: 'must be a string' });
      return undefined;
    }
    return value;
  };

  const bankCode = field('bankCode');
  if (bankCode !== undefined && !BANK_CODE_RE.test(bankCode)) {
    errors.push({ param: 'bankAccount.bankCode', message: BANK_ACCOUNT_LAYOUT.bankCode.message });
  }

  let agency = field('agency');
  if (agency !== undefined) {
    agency = normalizeTrailingX(agency);
    if (!AGENCY_RE.test(agency)) {
      errors.push({ param: 'bankAccount.agency', message: BANK_ACCOUNT_LAYOUT.agency.message });
    }
  }

  let account = field('account');
  if (account !== undefined) {
    account = normalizeTrailingX(account);
    if (!ACCOUNT_RE.test(account)) {
      errors.push({ param: 'bankAccount.account', message: BANK_ACCOUNT_LAYOUT.account.message });
    }
  }

  const accountType = field('accountType');
  if (accountType !== undefined && !(BANK_ACCOUNT_TYPES as readonly string[]).includes(accountType)) {
    errors.push({ param: 'bankAccount.accountType', message: 'must be one of checking, savings, payment' });
  }

  if (errors.length > 0) return { ok: false, errors };
  if (bankCode === undefined || agency === undefined || account === undefined || accountType === undefined) {
    throw new Error('assertion failed: all bank account fields present when no errors');
  }
  return {
    ok: true,
    value: { bankCode, agency, account, accountType: accountType as BankAccountType },
  };
}
