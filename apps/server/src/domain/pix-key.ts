// Pix keys (chaves Pix) as the Banco Central's DICT defines them (Manual Operacional do DICT,
// "Formato das chaves"; the same patterns as bacen/pix-api's `chave` and the DICT API's
// `Key`): a key has a type, and each type its own format.
//
//   cpf    11 digits, the CPF's two check digits right           12345678909
//   cnpj   14 characters, the CNPJ's check digits right           11222333000181
//          (alphanumeric since July 2026: domain/cnpj.ts)
//   email  lowercase, at most 77 characters, local@domain         loja@exemplo.com.br
//   phone  E.164 with the country code: +55, a 2-digit area code  +5511987654321
//          (11-99) and 8 or 9 digits (a Pix key is a Brazilian number)
//   evp    the random key: a UUID, lowercase, 36 characters       123e4567-e89b-12d3-a456-426614174000
//
// Decisions: the type is given, never guessed (11 digits are a CPF or a landline without its
// "+55"; guessing picks one silently). Punctuation is stripped from CPF/CNPJ (it is how people
// copy them), an e-mail is lowercased and an EVP too (the DICT stores both lowercase); nothing
// else is rewritten. Messages never echo the key.
import { normalizeCnpj } from './cnpj.js';

export const PIX_KEY_TYPES = ['cpf', 'cnpj', 'email', 'phone', 'evp'] as const;
export type PixKeyType = (typeof PIX_KEY_TYPES)[number];

export interface PixKey {
  type: PixKeyType;
  key: string;
}

const EMAIL_RE = /^[a-z0-9.!#$&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const PHONE_RE = /^\+55[1-9][1-9][0-9]{8,9}$/;
const EVP_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const MAX_EMAIL_KEY = 77;

export function isCpf(digits: string): boolean {
  if (!/^[0-9]{11}$/.test(digits) || /^(\d)\1{10}$/.test(digits)) return false;
  const dv = (len: number) => {
    let sum = 0;
    for (let i = 0; i < len; i++) sum += Number(digits[i]) * (len + 1 - i);
    const rest = (sum * 10) % 11;
    return rest === 10 ? 0 : rest;
  };
  return dv(9) === Number(digits[9]) && dv(10) === Number(digits[10]);
}

export type PixKeyValidation = { ok: true; value: PixKey } | { ok: false; message: string };

// The key in its canonical form, or why it is not one (a sentence after the field's name).
export function validatePixKey(type: string, key: string): PixKeyValidation {
  switch (type) {
    case 'cpf': {
      const digits = key.replace(/[.\-\s]/g, '');
      if (!/^[0-9]{11}$/.test(digits)) return { ok: false, message: 'must be a CPF of 11 digits (punctuation . - is ignored)' };
      if (!isCpf(digits)) return { ok: false, message: 'is not a valid CPF: the check digits do not match' };
      return { ok: true, value: { type, key: digits } };
    }
    case 'cnpj': {
      const canonical = normalizeCnpj(key);
      if (!canonical) return { ok: false, message: 'is not a valid CNPJ (14 characters, the last two check digits)' };
      return { ok: true, value: { type, key: canonical } };
    }
    case 'email': {
      const email = key.toLowerCase();
      if (email.length > MAX_EMAIL_KEY) return { ok: false, message: `must be an e-mail of at most ${MAX_EMAIL_KEY} characters` };
      if (!EMAIL_RE.test(email)) return { ok: false, message: 'is not an e-mail address as the DICT accepts it' };
      return { ok: true, value: { type, key: email } };
    }
    case 'phone':
      if (!PHONE_RE.test(key)) return { ok: false, message: 'must be a Brazilian phone in E.164: +55, the area code and 8 or 9 digits (+5521912345678)' };
      return { ok: true, value: { type, key } };
    case 'evp': {
      const evp = key.toLowerCase();
      if (!EVP_RE.test(evp)) return { ok: false, message: 'must be a random key (EVP): a UUID of 36 characters' };
      return { ok: true, value: { type, key: evp } };
    }
    default:
      return { ok: false, message: `type must be one of ${PIX_KEY_TYPES.join(', ')}` };
  }
}

// For screens and logs: enough to recognise the key, not enough to use it.
export function maskPixKey(k: PixKey): string {
  switch (k.type) {
    case 'cpf':
      return `***.${k.key.slice(3, 6)}.${k.key.slice(6, 9)}-**`;
    case 'cnpj':
      return `${k.key.slice(0, 2)}.***.***/${k.key.slice(8, 12)}-**`;
    case 'email': {
      const [local, domain] = k.key.split('@');
      return `${local.slice(0, 1)}***@${domain}`;
    }
    case 'phone':
      return `${k.key.slice(0, 5)}*****${k.key.slice(-4)}`;
    case 'evp':
      return `${k.key.slice(0, 8)}-****-****-****-********${k.key.slice(-4)}`;
  }
}
