// The standard's values are decimal strings ("10.50"); ours are integer centavos. Converted by
// text, never through a float.
const VALOR = /^(\d{1,10})\.(\d{2})$/;

export function centsToValor(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new RangeError(`an amount is a non-negative integer number of centavos (got ${cents})`);
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

export function valorToCents(valor: unknown): number {
  const m = typeof valor === 'string' ? VALOR.exec(valor) : null;
  if (!m) throw new RangeError(`not an API Pix amount ("10.50"): ${JSON.stringify(valor)?.slice(0, 20)}`);
  return Number(m[1]) * 100 + Number(m[2]);
}

// The standard's identifiers, checked before a request is sent (and on what comes back).
export const TXID = /^[a-zA-Z0-9]{26,35}$/;
export const RETURN_ID = /^[a-zA-Z0-9]{1,35}$/;
export const E2EID = /^[a-zA-Z0-9]{32}$/;

// txid of a payment's charge: derived from the payment id (pay_ + 26 base32 chars), so a retry
// is the same charge at the PSP. 28 characters.
export function txidOf(paymentId: string): string {
  const txid = 'pg' + paymentId.replace(/^pay_/, '');
  if (!TXID.test(txid)) throw new RangeError(`no txid for ${paymentId}`);
  return txid;
}

// Devolução id of a refund: derived from the refund id (ref_ + 26), 28 characters.
export function returnIdOf(refundId: string): string {
  const id = 'rf' + refundId.replace(/^ref_/, '');
  if (!RETURN_ID.test(id)) throw new RangeError(`no devolução id for ${refundId}`);
  return id;
}
