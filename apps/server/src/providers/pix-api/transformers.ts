import type { PixChargeState, PixChargeStatus, PixReturn, PixReturnNature, PixReturnStatus, ReceivedPix, NotificationHints } from '../connector.js';
import { ProviderUnavailable } from '../port.js';
import { E2EID, TXID, valorToCents } from './money.js';

// Request/response transformers between the standard API Pix and the connector port's types.
// An answer that does not have the standard's shape is not believed: it is treated as no
// answer (ProviderUnavailable), so the read is tried again rather than a payment moved on
// garbage.

const COB_STATUS: Record<string, PixChargeStatus> = {
  ATIVA: 'active',
  CONCLUIDA: 'completed',
  REMOVIDA_PELO_USUARIO_RECEBEDOR: 'removed_by_receiver',
  REMOVIDA_PELO_PSP: 'removed_by_psp',
};
const RETURN_STATUS: Record<string, PixReturnStatus> = { EM_PROCESSAMENTO: 'processing', DEVOLVIDO: 'returned', NAO_REALIZADO: 'not_done' };
const NATURES = new Set<PixReturnNature>(['ORIGINAL', 'RETIRADA', 'MED_OPERACIONAL', 'MED_FRAUDE']);

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);

function malformed(what: string): never {
  throw new ProviderUnavailable(`PSP answered a ${what} without the standard's shape`);
}

export function toReturn(v: unknown): PixReturn {
  const d = obj(v);
  if (!d || typeof d.id !== 'string' || typeof d.status !== 'string' || !(d.status in RETURN_STATUS)) malformed('devolução');
  const nature = typeof d.natureza === 'string' && NATURES.has(d.natureza as PixReturnNature) ? (d.natureza as PixReturnNature) : 'ORIGINAL';
  return { id: d.id, rtrId: typeof d.rtrId === 'string' ? d.rtrId : null, amountCents: valorToCents(d.valor), status: RETURN_STATUS[d.status], nature };
}

export function toReceived(v: unknown): ReceivedPix {
  const p = obj(v);
  if (!p || typeof p.endToEndId !== 'string' || !E2EID.test(p.endToEndId) || typeof p.horario !== 'string') malformed('Pix');
  const txid = typeof p.txid === 'string' && TXID.test(p.txid) ? p.txid : null;
  const returns = Array.isArray(p.devolucoes) ? p.devolucoes.map(toReturn) : [];
  return { e2eid: p.endToEndId, txid, amountCents: valorToCents(p.valor), paidAtIso: new Date(p.horario).toISOString(), returns };
}

export function toCharge(v: unknown): PixChargeState {
  const c = obj(v);
  const valor = obj(c?.valor);
  if (!c || typeof c.txid !== 'string' || typeof c.status !== 'string' || !(c.status in COB_STATUS) || !valor) malformed('cob');
  const loc = obj(c.loc);
  const location = typeof c.location === 'string' ? c.location : typeof loc?.location === 'string' ? loc.location : null;
  return {
    txid: c.txid,
    status: COB_STATUS[c.status],
    amountCents: valorToCents(valor.original),
    copyPaste: typeof c.pixCopiaECola === 'string' ? c.pixCopiaECola : null,
    location,
    payments: Array.isArray(c.pix) ? c.pix.map(toReceived) : [],
  };
}

// The callback's body `{pix: [...]}`: only which txids and e2eids to read again.
export function toHints(body: unknown): NotificationHints {
  const list = obj(body)?.pix;
  const hints: NotificationHints = { txids: [], e2eids: [] };
  if (!Array.isArray(list)) return hints;
  for (const item of list.slice(0, 1000)) {
    const p = obj(item);
    if (typeof p?.txid === 'string' && TXID.test(p.txid) && !hints.txids.includes(p.txid)) hints.txids.push(p.txid);
    if (typeof p?.endToEndId === 'string' && E2EID.test(p.endToEndId) && !hints.e2eids.includes(p.endToEndId)) hints.e2eids.push(p.endToEndId);
  }
  return hints;
}
