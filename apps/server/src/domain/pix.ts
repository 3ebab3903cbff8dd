// Pix "copia e cola" payloads (BR Code), following the Banco Central "Manual do BR Code", which
// profiles EMVCo's Merchant-Presented QR (MPM): a flat list of TLV fields, each
// `ID (2 digits) + LENGTH (2 decimal digits) + VALUE`, some of which nest another TLV list.
// Pure: no I/O, no clock, no randomness, so the same payment always yields the same string.

const PIX_GUI = 'br.gov.bcb.pix';

// Field IDs from the manual.
const ID_FORMAT_INDICATOR = '00';
const ID_POINT_OF_INITIATION = '01';
const ID_MERCHANT_ACCOUNT_PIX = '26';
const ID_MAI_GUI = '00';
const ID_MAI_KEY = '01';
const ID_MAI_DESCRIPTION = '02';
const ID_MCC = '52';
const ID_CURRENCY = '53';
const ID_AMOUNT = '54';
const ID_COUNTRY = '58';
const ID_MERCHANT_NAME = '59';
const ID_MERCHANT_CITY = '60';
const ID_ADDITIONAL_DATA = '62';
const ID_ADDITIONAL_TXID = '05';
const ID_CRC = '63';

const MAX_TLV_VALUE = 99; // two decimal digits of length
const MAX_PIX_KEY = 77;
const MAX_TXID = 25;
const MAX_MERCHANT_NAME = 25;
const MAX_MERCHANT_CITY = 15;
const MAX_AMOUNT_CHARS = 13; // manual caps field 54 at 13 chars, e.g. "9999999999.99"
/** Largest amount that fits field 54 ("9999999999.99"). */
export const MAX_PIX_AMOUNT_CENTS = 999_999_999_999;

const TXID_RE = /^[A-Za-z0-9]{1,25}$/;
// EMV "ans" fields are printable ASCII; anything else makes TLV lengths (counted in characters)
// disagree with the bytes the CRC and the payer's app see.
const PRINTABLE_ASCII_RE = /^[\x20-\x7E]*$/;

export interface PixBrCodeInput {
  pixKey: string;
  amountCents: number;
  txid: string;
  merchantName: string;
  merchantCity: string;
  description?: string;
}

export interface ParsedPixBrCode {
  pixKey: string;
  amountCents: number;
  txid: string;
  merchantName: string;
  merchantCity: string;
}

/** CRC-16/CCITT-FALSE over the UTF-8 bytes of `input`: 4 uppercase hex digits. */
export function crc16ccittFalse(input: string): string {
  const bytes = new TextEncoder().encode(input);
  let crc = 0xffff;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

function tlv(id: string, value: string): string {
  if (value.length > MAX_TLV_VALUE) {
    throw new RangeError(`BR Code field ${id} is ${value.length} chars; the limit is ${MAX_TLV_VALUE}`);
  }
  return id + String(value.length).padStart(2, '0') + value;
}

/**
 * Payer apps show these fields verbatim and many reject non-ASCII, so accents are folded
 * ("São Paulo" -> "Sao Paulo") and anything still outside printable ASCII is dropped.
 */
function toAsciiField(value: string, maxLength: number): string {
  const ascii = value
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7E]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return ascii.slice(0, maxLength).trimEnd();
}

/** Integer centavos -> "10.50" without going through floating point. */
function formatAmountCents(amountCents: number): string {
  const reais = Math.trunc(amountCents / 100);
  const cents = amountCents % 100;
  return `${reais}.${String(cents).padStart(2, '0')}`;
}

/** "10.5" / "10.50" / "10" -> 1050, digit by digit so no float rounding can creep in. */
function parseAmountCents(value: string): number {
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(value);
  if (!match || value.length > MAX_AMOUNT_CHARS) {
    throw new RangeError(`BR Code amount (field 54) is malformed: "${value}"`);
  }
  const reais = Number(match[1]);
  const cents = Number((match[2] ?? '').padEnd(2, '0'));
  return reais * 100 + cents;
}

export function buildPixBrCode(input: PixBrCodeInput): string {
  const { pixKey, amountCents, txid } = input;

  if (!Number.isSafeInteger(amountCents) || amountCents <= 0) {
    throw new RangeError(`amountCents must be a positive safe integer, got ${amountCents}`);
  }
  if (amountCents > MAX_PIX_AMOUNT_CENTS) {
    throw new RangeError(
      `amountCents ${amountCents} exceeds the BR Code maximum of ${MAX_PIX_AMOUNT_CENTS} (field 54 holds 13 chars)`,
    );
  }
  if (typeof txid !== 'string' || !TXID_RE.test(txid)) {
    throw new RangeError(`txid must be 1-${MAX_TXID} characters of [A-Za-z0-9], got "${String(txid)}"`);
  }
  if (typeof pixKey !== 'string' || pixKey.length === 0 || pixKey.length > MAX_PIX_KEY) {
    throw new RangeError(`pixKey must be 1-${MAX_PIX_KEY} characters, got ${String(pixKey?.length ?? pixKey)}`);
  }
  if (!PRINTABLE_ASCII_RE.test(pixKey) || pixKey.trim() !== pixKey) {
    throw new RangeError('pixKey must be printable ASCII without surrounding whitespace');
  }
  const merchantName = toAsciiField(input.merchantName ?? '', MAX_MERCHANT_NAME);
  if (merchantName.length === 0) {
    throw new RangeError('merchantName must contain at least one printable ASCII character after normalization');
  }
  const merchantCity = toAsciiField(input.merchantCity ?? '', MAX_MERCHANT_CITY);
  if (merchantCity.length === 0) {
    throw new RangeError('merchantCity must contain at least one printable ASCII character after normalization');
  }

  const gui = tlv(ID_MAI_GUI, PIX_GUI);
  const key = tlv(ID_MAI_KEY, pixKey);
  let merchantAccount = gui + key;
  if (input.description !== undefined) {
    // The description is informational only, and it shares field 26's 99 chars with the key:
    // trimming it to what is left beats refusing to charge because of a long label.
    const room = MAX_TLV_VALUE - merchantAccount.length - 4;
    const description = room > 0 ? toAsciiField(input.description, room) : '';
    if (description.length > 0) merchantAccount += tlv(ID_MAI_DESCRIPTION, description);
  }

  const body =
    tlv(ID_FORMAT_INDICATOR, '01') +
    // "12" = single use: the payer's app must not offer to pay the same code twice.
    tlv(ID_POINT_OF_INITIATION, '12') +
    tlv(ID_MERCHANT_ACCOUNT_PIX, merchantAccount) +
    tlv(ID_MCC, '0000') +
    tlv(ID_CURRENCY, '986') + // ISO 4217 BRL
    tlv(ID_AMOUNT, formatAmountCents(amountCents)) +
    tlv(ID_COUNTRY, 'BR') +
    tlv(ID_MERCHANT_NAME, merchantName) +
    tlv(ID_MERCHANT_CITY, merchantCity) +
    tlv(ID_ADDITIONAL_DATA, tlv(ID_ADDITIONAL_TXID, txid)) +
    // The CRC covers its own ID and length, so they are appended before computing it.
    ID_CRC +
    '04';
  return body + crc16ccittFalse(body);
}

const ID_MAI_URL = '25';
const MAX_LOCATION = 77;

export interface DynamicPixBrCodeInput {
  // The charge's payload location at the PSP (API Pix `loc.location`), with or without a scheme.
  location: string;
  merchantName: string;
  merchantCity: string;
}

/**
 * A dynamic BR Code (Manual do BR Code, "QR dinâmico"): field 26 carries the URL of the charge's
 * payload at the PSP (sub-field 25, without the scheme) instead of a key, and field 62's txid is
 * `***`: the payer's app fetches the payload (a JWS signed by the PSP) and pays what it says, so
 * neither key nor amount is written here. Used for a live Pix whose PSP answers the charge's
 * `location` without its own `pixCopiaECola` (optional in API Pix 2.9.0).
 */
export function buildDynamicPixBrCode(input: DynamicPixBrCodeInput): string {
  const location = input.location.replace(/^https:\/\//i, '');
  if (location.length === 0 || location.length > MAX_LOCATION || !PRINTABLE_ASCII_RE.test(location) || /\s/.test(location) || /^[a-z]+:\/\//i.test(location)) {
    throw new RangeError(`location must be an https URL of at most ${MAX_LOCATION} printable characters without its scheme, got "${input.location.slice(0, 100)}"`);
  }
  const merchantName = toAsciiField(input.merchantName ?? '', MAX_MERCHANT_NAME);
  const merchantCity = toAsciiField(input.merchantCity ?? '', MAX_MERCHANT_CITY);
  if (merchantName.length === 0 || merchantCity.length === 0) throw new RangeError('merchantName and merchantCity must contain printable ASCII characters');
  const body =
    tlv(ID_FORMAT_INDICATOR, '01') +
    tlv(ID_POINT_OF_INITIATION, '12') +
    tlv(ID_MERCHANT_ACCOUNT_PIX, tlv(ID_MAI_GUI, PIX_GUI) + tlv(ID_MAI_URL, location)) +
    tlv(ID_MCC, '0000') +
    tlv(ID_CURRENCY, '986') +
    tlv(ID_COUNTRY, 'BR') +
    tlv(ID_MERCHANT_NAME, merchantName) +
    tlv(ID_MERCHANT_CITY, merchantCity) +
    tlv(ID_ADDITIONAL_DATA, tlv(ID_ADDITIONAL_TXID, '***')) +
    ID_CRC +
    '04';
  return body + crc16ccittFalse(body);
}

function parseTlv(data: string, context: string): Map<string, string> {
  const fields = new Map<string, string>();
  let i = 0;
  while (i < data.length) {
    const header = data.slice(i, i + 4);
    if (!/^\d{4}$/.test(header)) {
      throw new Error(`Malformed BR Code: bad TLV header "${header}" at offset ${i} in ${context}`);
    }
    const id = header.slice(0, 2);
    const start = i + 4;
    const end = start + Number(header.slice(2));
    if (end > data.length) {
      throw new Error(`Malformed BR Code: field ${id} in ${context} overruns the payload`);
    }
    // A repeated ID would make "which one wins" parser-specific; payer apps may disagree with us.
    if (fields.has(id)) throw new Error(`Malformed BR Code: field ${id} repeated in ${context}`);
    fields.set(id, data.slice(start, end));
    i = end;
  }
  return fields;
}

function required(fields: Map<string, string>, id: string, what: string): string {
  const value = fields.get(id);
  if (value === undefined || value.length === 0) {
    throw new Error(`Malformed BR Code: missing ${what} (field ${id})`);
  }
  return value;
}

/**
 * Parses a static Pix BR Code and verifies its CRC. Throws on a bad CRC, malformed TLV, a
 * payload that is not Pix, or one without an amount (every code this service issues has one).
 */
export function parsePixBrCode(code: string): ParsedPixBrCode {
  const trimmed = code.trim();
  // CRC must be the last field: "6304" + 4 hex digits.
  const crcAt = trimmed.length - 8;
  if (crcAt < 0 || trimmed.slice(crcAt, crcAt + 4) !== ID_CRC + '04') {
    throw new Error('Malformed BR Code: does not end with a CRC field (6304XXXX)');
  }
  const expectedCrc = crc16ccittFalse(trimmed.slice(0, crcAt + 4));
  const actualCrc = trimmed.slice(crcAt + 4).toUpperCase();
  if (expectedCrc !== actualCrc) {
    throw new Error(`Invalid BR Code CRC: expected ${expectedCrc}, found ${actualCrc}`);
  }

  const top = parseTlv(trimmed, 'payload');
  // Guards against a "6304" that only looked like the CRC field but sat inside another value.
  if (top.get(ID_CRC)?.toUpperCase() !== actualCrc) {
    throw new Error('Malformed BR Code: CRC field is not the last TLV field');
  }
  if (top.get(ID_FORMAT_INDICATOR) !== '01' || !trimmed.startsWith('000201')) {
    throw new Error('Malformed BR Code: payload format indicator (000201) must come first');
  }

  // Merchant account templates may sit anywhere in 26-51; Pix is the one with the BCB GUI,
  // which the manual says to compare case-insensitively.
  let account: Map<string, string> | undefined;
  for (let id = 26; id <= 51; id++) {
    const value = top.get(String(id));
    if (value === undefined) continue;
    const sub = parseTlv(value, `field ${id}`);
    if (sub.get(ID_MAI_GUI)?.toLowerCase() === PIX_GUI) {
      account = sub;
      break;
    }
  }
  if (!account) throw new Error(`Not a Pix BR Code: no merchant account with GUI ${PIX_GUI}`);
  const pixKey = required(account, ID_MAI_KEY, 'Pix key');

  const additional = parseTlv(required(top, ID_ADDITIONAL_DATA, 'additional data'), `field ${ID_ADDITIONAL_DATA}`);

  return {
    pixKey,
    amountCents: parseAmountCents(required(top, ID_AMOUNT, 'transaction amount')),
    txid: required(additional, ID_ADDITIONAL_TXID, 'txid'),
    merchantName: required(top, ID_MERCHANT_NAME, 'merchant name'),
    merchantCity: required(top, ID_MERCHANT_CITY, 'merchant city'),
  };
}

/**
 * Derives a BR Code txid (max 25 alphanumerics) from an id such as `pay_01j...` (prefix +
 * 26-char ULID). Dropping the ULID's first char loses nothing: it holds the top 3 bits of a
 * 48-bit millisecond timestamp and stays "0" until the year 10889. Uppercased because Crockford
 * base32 is case-insensitive and banks echo txids back in uppercase.
 */
export function pixTxidFromId(id: string): string {
  const body = id.slice(id.lastIndexOf('_') + 1);
  // Refuse rather than strip odd characters: stripping could map two ids to one txid.
  if (!/^[A-Za-z0-9]+$/.test(body)) {
    throw new RangeError(`Cannot derive a Pix txid from id "${id}": expected prefix_ALPHANUMERIC`);
  }
  return body.slice(-MAX_TXID).toUpperCase();
}
