import type { Clock } from '../../clock.js';
import type { OpenedConnectorAccount, PayoutConnector, PayoutDestination, PayoutHints, PayoutInput, PayoutState } from '../connector.js';
import { ProviderRejected, ProviderUnavailable } from '../port.js';
import { PixApiClient, type PixApiResponse } from '../pix-api/client.js';
import { centsToValor, valorToCents } from '../pix-api/money.js';

// Efí's send-Pix API as a payout connector (efipay/sdk-node-apis-efi, src/lib/constants.js:
// pixSend `PUT /v3/gn/pix/:idEnvio`, pixSendDetailId `GET /v2/gn/pix/enviados/id-envio/:idEnvio`,
// getAccountBalance `GET /v2/gn/saldo`; bodies from dist/types/methods/pix.d.ts). The same
// OAuth2-over-mutual-TLS client as the API Pix (pix-api/client.ts): a payout is sent from the
// Pix connector account of the Efí dialect, its `pixKey` being the payer's key (`pagador.chave`).
//
// - `idEnvio` is ours (derived from the settlement id): Efí answers a repeated one with 409, and
//   a 409 (or a lost answer) is resolved by reading the payout by its idEnvio;
// - the answer to a send is EM_PROCESSAMENTO; REALIZADO or NAO_REALIZADO come by webhook (a
//   hint) or by a read;
// - Efí's errors are `{nome, mensagem}`: a 4xx other than 401/404/409 is a refusal.

export const PAYOUT_ID = /^[a-zA-Z0-9]{1,35}$/;

// idEnvio of a settlement's payout: `po` + the settlement id's 26 characters (28 in all).
export function payoutIdOf(settlementId: string): string {
  const id = 'po' + settlementId.replace(/^stl_/, '');
  if (!PAYOUT_ID.test(id)) throw new RangeError(`no idEnvio for ${settlementId}`);
  return id;
}

const ACCOUNT_TYPES: Record<string, string> = { checking: 'cacc', savings: 'svgs', payment: 'tran' };

function obj(v: unknown): Record<string, unknown> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function favorecido(d: PayoutDestination): Record<string, unknown> {
  if (d.kind === 'pix_key') {
    const holder = d.holderDocument ? (d.holderDocument.length === 11 ? { cpf: d.holderDocument } : { cnpj: d.holderDocument }) : {};
    return { chave: d.pixKey.key, ...holder };
  }
  return {
    contaBanco: {
      nome: d.holderName.slice(0, 200),
      ...(d.holderDocument.length === 11 ? { cpf: d.holderDocument } : { cnpj: d.holderDocument }),
      codigoBanco: d.ispb,
      agencia: d.agency.replace(/-.*$/, ''),
      conta: d.account.replace(/-/g, ''),
      tipoConta: ACCOUNT_TYPES[d.accountType] ?? 'cacc',
    },
  };
}

// A payout as Efí shows it (the send's answer or a read); shapes we do not know are not believed.
export function toPayoutState(body: unknown, payoutId: string): PayoutState {
  const b = obj(body);
  if (!b) throw new ProviderUnavailable('Efí answered a payout that is not an object');
  const status = b.status;
  const e2eid = typeof b.endToEndId === 'string' ? b.endToEndId : typeof b.e2eId === 'string' ? b.e2eId : null;
  const horario = obj(b.horario);
  const extras = obj(b.gnExtras);
  const erro = obj(extras?.erro);
  const base = { payoutId: typeof b.idEnvio === 'string' ? b.idEnvio : payoutId, e2eid, amountCents: valorToCents(b.valor), paidAtIso: null, failureCode: null, failureReason: null };
  if (status === 'EM_PROCESSAMENTO') return { ...base, status: 'processing' };
  if (status === 'REALIZADO') return { ...base, status: 'paid', paidAtIso: typeof horario?.liquidacao === 'string' ? horario.liquidacao : null };
  if (status === 'NAO_REALIZADO') {
    const reason = typeof b.motivo === 'string' ? b.motivo : typeof erro?.motivo === 'string' ? erro.motivo : 'NAO_REALIZADO';
    const code = typeof erro?.codigo === 'string' ? erro.codigo : 'nao_realizado';
    return { ...base, status: 'failed', failureCode: code, failureReason: reason.slice(0, 300) };
  }
  throw new ProviderUnavailable(`Efí answered a payout status we do not know (${String(status).slice(0, 30)})`);
}

function refusal(res: PixApiResponse): ProviderRejected {
  const b = obj(res.body);
  const code = typeof b?.nome === 'string' ? b.nome : `http_${res.status}`;
  const words = typeof b?.mensagem === 'string' ? b.mensagem : typeof b?.detail === 'string' ? b.detail : `Efí answered ${res.status}`;
  return new ProviderRejected(code.slice(0, 60), words.slice(0, 300));
}

export class EfiPayoutConnector implements PayoutConnector {
  readonly name = 'efi_payout';
  private readonly clients = new Map<string, PixApiClient>();

  constructor(private readonly clock: Clock) {}

  private client(account: OpenedConnectorAccount): PixApiClient {
    const key = `${account.id}|${account.secrets.certificatePem.length}:${account.secrets.clientSecret.length}:${account.clientId}:${account.settings.baseUrl}`;
    let client = this.clients.get(key);
    if (!client) {
      for (const [k, c] of this.clients) if (k.startsWith(account.id + '|')) { c.close(); this.clients.delete(k); }
      client = new PixApiClient(account, this.clock);
      this.clients.set(key, client);
    }
    return client;
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  async send(account: OpenedConnectorAccount, input: PayoutInput): Promise<PayoutState> {
    if (!PAYOUT_ID.test(input.payoutId)) throw new RangeError('an idEnvio is 1-35 letters and digits');
    const body = {
      valor: centsToValor(input.amountCents),
      pagador: { chave: account.settings.pixKey, ...(input.description ? { infoPagador: input.description.slice(0, 140) } : {}) },
      favorecido: favorecido(input.destination),
    };
    let res: PixApiResponse | null = null;
    try {
      res = await this.client(account).call('PUT', `/v3/gn/pix/${input.payoutId}`, { body, exactPath: true });
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) throw error;
    }
    if (res && (res.status === 200 || res.status === 201)) return toPayoutState(res.body, input.payoutId);
    if (res && res.status !== 409) throw refusal(res);
    // 409 (this idEnvio was sent before: a retry) or no answer: the read decides. Not found
    // after a lost answer means the PSP never took it: the caller may send it again.
    const back = await this.read(account, input.payoutId);
    if (back) return back;
    if (res) throw new ProviderUnavailable('Efí answered 409 for an idEnvio it cannot show yet');
    throw new ProviderUnavailable('the payout was not answered and Efí does not have it');
  }

  async read(account: OpenedConnectorAccount, payoutId: string): Promise<PayoutState | null> {
    const path = `/v2/gn/pix/enviados/id-envio/${payoutId}`;
    const client = this.client(account);
    let res: PixApiResponse;
    try {
      res = await client.call('GET', path, { exactPath: true });
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) throw error;
      res = await client.call('GET', path, { exactPath: true });
    }
    if (res.status === 404) return null;
    if (res.status !== 200) throw refusal(res);
    return toPayoutState(res.body, payoutId);
  }

  async balance(account: OpenedConnectorAccount): Promise<number> {
    const res = await this.client(account).call('GET', '/v2/gn/saldo', { exactPath: true });
    if (res.status !== 200) throw refusal(res);
    return valorToCents(obj(res.body)?.saldo);
  }

  // Efí's webhook for a sent Pix: `{pix: [{endToEndId, status, gnExtras: {idEnvio}, ...}]}`.
  parseNotification(body: unknown): PayoutHints {
    const hints: PayoutHints = { payoutIds: [], e2eids: [] };
    const list = obj(body)?.pix;
    if (!Array.isArray(list)) return hints;
    for (const item of list.slice(0, 1000)) {
      const p = obj(item);
      const id = obj(p?.gnExtras)?.idEnvio;
      if (typeof id === 'string' && PAYOUT_ID.test(id) && !hints.payoutIds.includes(id)) hints.payoutIds.push(id);
      if (typeof p?.endToEndId === 'string' && /^[a-zA-Z0-9]{32}$/.test(p.endToEndId) && !hints.e2eids.includes(p.endToEndId)) hints.e2eids.push(p.endToEndId);
    }
    return hints;
  }
}
