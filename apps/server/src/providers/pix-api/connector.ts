import type { Clock } from '../../clock.js';
import type { NotificationHints, OpenedConnectorAccount, PixChargeInput, PixChargeState, PixConnector, PixReturn, ReceivedPix } from '../connector.js';
import { ProviderRejected, ProviderUnavailable } from '../port.js';
import { PixApiClient } from './client.js';
import { centsToValor, E2EID, RETURN_ID, TXID } from './money.js';
import { toCharge, toHints, toReceived, toReturn } from './transformers.js';

// The standard API Pix as a connector. Safe retries only: PUT /cob/{txid} and PUT
// /pix/{e2eid}/devolucao/{id} carry ids derived from ours, so after a lost answer the object is
// read back (GET) before anything is sent again; a GET is repeated once.

const MAX_PAGES = 50; // GET /pix pages per reconciliation window (limit on everything)

export class PixApiConnector implements PixConnector {
  readonly name = 'pix_api';
  // One client (its mTLS agent and token) per connector account and secrets version.
  private readonly clients = new Map<string, PixApiClient>();

  constructor(private readonly clock: Clock) {}

  client(account: OpenedConnectorAccount): PixApiClient {
    const key = `${account.id}:${account.secrets.certificatePem.length}:${account.secrets.clientSecret.length}:${account.clientId}:${account.settings.baseUrl}`;
    let client = this.clients.get(account.id + '|' + key);
    if (!client) {
      for (const [k, c] of this.clients) if (k.startsWith(account.id + '|')) { c.close(); this.clients.delete(k); }
      client = new PixApiClient(account, this.clock);
      this.clients.set(account.id + '|' + key, client);
    }
    return client;
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  async authenticate(account: OpenedConnectorAccount): Promise<void> {
    await this.client(account).accessToken();
  }

  async createCharge(account: OpenedConnectorAccount, input: PixChargeInput): Promise<PixChargeState> {
    if (!TXID.test(input.txid)) throw new RangeError('a txid is 26-35 letters and digits');
    const client = this.client(account);
    const body = {
      calendario: { expiracao: input.expiresInSeconds },
      valor: { original: centsToValor(input.amountCents) },
      chave: account.settings.pixKey,
      ...(input.description ? { solicitacaoPagador: input.description.slice(0, 140) } : {}),
    };
    try {
      return toCharge(PixApiClient.ok(await client.call('PUT', `/cob/${input.txid}`, { body })));
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) throw error;
      // The charge may exist (answer lost): read it back; only if it does not, create it again.
      const back = await client.call('GET', `/cob/${input.txid}`);
      if (back.status === 200) return toCharge(back.body);
      if (back.status !== 404) PixApiClient.ok(back);
      return toCharge(PixApiClient.ok(await client.call('PUT', `/cob/${input.txid}`, { body })));
    }
  }

  async readCharge(account: OpenedConnectorAccount, txid: string): Promise<PixChargeState> {
    return toCharge(PixApiClient.ok(await this.get(account, `/cob/${txid}`)));
  }

  async removeCharge(account: OpenedConnectorAccount, txid: string): Promise<PixChargeState> {
    const client = this.client(account);
    const res = await client.call('PATCH', `/cob/${txid}`, { body: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } });
    // A charge already paid (or already removed) cannot be removed: the read says what it is.
    if (res.status >= 400) return this.readCharge(account, txid);
    return toCharge(res.body);
  }

  async refund(account: OpenedConnectorAccount, input: { e2eid: string; returnId: string; amountCents: number }): Promise<PixReturn> {
    if (!E2EID.test(input.e2eid)) throw new RangeError('an end-to-end id is 32 letters and digits');
    if (!RETURN_ID.test(input.returnId)) throw new RangeError('a devolução id is at most 35 letters and digits');
    const client = this.client(account);
    const path = `/pix/${input.e2eid}/devolucao/${input.returnId}`;
    let res;
    try {
      res = await client.call('PUT', path, { body: { valor: centsToValor(input.amountCents) } });
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) throw error;
      res = { status: 0, body: null };
    }
    if (res.status === 201 || res.status === 200) return toReturn(res.body);
    // The standard answers a repeated devolução id with a 400; after a lost answer we do not
    // know either: the read decides, so a retry never refunds twice.
    const back = await client.call('GET', path);
    if (back.status === 200) return toReturn(back.body);
    if (res.status === 0) throw new ProviderUnavailable('the devolução was not answered and cannot be read yet');
    PixApiClient.ok(res);
    throw new ProviderRejected('refund_refused', `PSP refused the devolução (${res.status})`);
  }

  async readRefund(account: OpenedConnectorAccount, e2eid: string, returnId: string): Promise<PixReturn> {
    return toReturn(PixApiClient.ok(await this.get(account, `/pix/${e2eid}/devolucao/${returnId}`)));
  }

  async readReceived(account: OpenedConnectorAccount, e2eid: string): Promise<ReceivedPix> {
    return toReceived(PixApiClient.ok(await this.get(account, `/pix/${e2eid}`)));
  }

  async listReceived(account: OpenedConnectorAccount, window: { fromIso: string; toIso: string }): Promise<ReceivedPix[]> {
    const out: ReceivedPix[] = [];
    for (let page = 0; page < MAX_PAGES; page++) {
      const body = PixApiClient.ok(await this.get(account, '/pix', { inicio: window.fromIso, fim: window.toIso, 'paginacao.paginaAtual': String(page) })) as { pix?: unknown[]; parametros?: { paginacao?: { quantidadeDePaginas?: number } } };
      for (const p of body.pix ?? []) out.push(toReceived(p));
      const pages = body.parametros?.paginacao?.quantidadeDePaginas ?? 1;
      if (page + 1 >= pages) break;
    }
    return out;
  }

  async registerWebhook(account: OpenedConnectorAccount, url: string): Promise<void> {
    PixApiClient.ok(await this.client(account).call('PUT', `/webhook/${encodeURIComponent(account.settings.pixKey)}`, { body: { webhookUrl: url } }));
  }

  async readWebhook(account: OpenedConnectorAccount): Promise<string | null> {
    const res = await this.get(account, `/webhook/${encodeURIComponent(account.settings.pixKey)}`);
    if (res.status === 404) return null;
    const body = PixApiClient.ok(res) as { webhookUrl?: unknown };
    return typeof body.webhookUrl === 'string' ? body.webhookUrl : null;
  }

  parseNotification(body: unknown): NotificationHints {
    return toHints(body);
  }

  // A read, repeated once after a transport failure.
  private async get(account: OpenedConnectorAccount, path: string, query?: Record<string, string>) {
    const client = this.client(account);
    try {
      return await client.call('GET', path, { query });
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) throw error;
      return client.call('GET', path, { query });
    }
  }
}
