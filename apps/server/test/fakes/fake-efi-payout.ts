// A fake Efí send-Pix API (payouts) for tests, over mutual TLS on 127.0.0.1 with per-run
// certificates (pki.ts), stateful, in memory, on a Clock.
//
// NO MACHINE-READABLE SPEC EXISTS for Efí's send-Pix API (the Banco Central's API Pix is
// receiver-side; Efí publishes no OpenAPI document for `/v3/gn/pix`). This fake is written from
// Efí's documentation, and every shape below is one of these, not a guess of ours unless flagged:
//   - efipay/sdk-node-apis-efi (commit 2728b67, 2026-01-22): src/lib/constants.js, the routes
//     pixSend `PUT /v3/gn/pix/:idEnvio`, pixSendDetailId `GET /v2/gn/pix/enviados/id-envio/:idEnvio`,
//     getAccountBalance `GET /v2/gn/saldo`, pixConfigWebhook `PUT /v2/webhook/:chave`;
//     dist/types/methods/pix.d.ts, the bodies: pixSend {valor, pagador {chave, infoPagador?},
//     favorecido {chave?, cpf?, cnpj?, contaBanco? {nome, cpf?, cnpj?, codigoBanco, agencia,
//     conta, tipoConta}}} answering {idEnvio, e2eId, valor, horario {solicitacao}, status};
//     pixSendDetailId answering {endToEndId, idEnvio, valor, chave, status, horario {solicitacao,
//     liquidacao}, favorecido}; getAccountBalance answering {saldo}; errors {nome, mensagem};
//   - Efí's docs pages "Envio e pagamento Pix" (dev.efipay.com.br/docs/api-pix/envio-pagamento-pix):
//     idEnvio 1-35 letters and digits, a repeated idEnvio answered 409, the answer
//     EM_PROCESSAMENTO, the final REALIZADO or NAO_REALIZADO by webhook or by a read; the
//     homologation outcomes by amount: R$ 0,01-10,00 paid, R$ 10,01-20,00 refused by webhook,
//     above R$ 20,00 refused at once;
//   - "Webhooks" (dev.efipay.com.br/docs/api-pix/webhooks): a sent Pix is notified on the webhook
//     of the payer's key as {pix: [{endToEndId, valor, chave, horario, status, tipo:
//     "SOLICITACAO", gnExtras: {idEnvio}}]}.
// Flagged as ours (check them against the real homologation with `npm run test:providers-live`):
// where the reason of a NAO_REALIZADO lives (here `gnExtras.erro {codigo, motivo}`), the `nome`
// values of errors, and that `codigoBanco` is the bank's ISPB and `tipoConta` one of cacc, svgs,
// tran. Also ours: the answer to a `favorecido.cpf`/`cnpj` that is not the key's owner (Efí's
// send-Pix page says the Pix is only made when the key belongs to the document given; here a 400
// `documento_favorecido_divergente` at once), for the keys whose owner a test sets in `keyOwners`.
// The balance (`GET /v2/gn/saldo`, getAccountBalance in src/constants/endpoints.ts at commit
// f2dfc4a) is `saldoCents`, settable: a send debits it, a NAO_REALIZADO gives it back.
import { createServer, request as httpsRequest, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../../src/clock.js';
import { createPki, type KeyPair, type Pki } from './pki.js';

const ID_ENVIO = /^[a-zA-Z0-9]{1,35}$/;
const VALOR = /^\d{1,10}\.\d{2}$/;
const PSP_ISPB = '09089356'; // Efí's

export type PayoutStatus = 'EM_PROCESSAMENTO' | 'REALIZADO' | 'NAO_REALIZADO';

export interface SentPix {
  idEnvio: string;
  endToEndId: string;
  valor: string;
  chave: string; // the payer's
  favorecido: Record<string, unknown>;
  status: PayoutStatus;
  /** What it will become when settled (by the homologation rule on its amount). */
  outcome: 'REALIZADO' | 'NAO_REALIZADO';
  solicitacaoMs: number;
  liquidacaoMs?: number;
  erro?: { codigo: string; motivo: string };
  infoPagador?: string;
}

export interface EfiFault {
  /** unavailable: 503, nothing done. drop: the work is done, then the connection is cut. */
  kind: 'unavailable' | 'drop';
  /** "PUT /v3/gn/pix", "GET /v2/gn/pix/enviados/id-envio", "GET /v2/gn/saldo"; any when absent. */
  operation?: string;
  times?: number;
}

export interface FakeEfiPayoutOptions {
  clock?: Clock;
  pki?: Pki;
  /** The platform's Pix key at Efí (the payer of every payout). */
  chave?: string;
  /** Balance in centavos (default R$ 1.000.000,00). */
  saldoCents?: number;
}

export interface CallbackRecord {
  url: string;
  body: unknown;
  status?: number;
  error?: string;
}

function centsOf(valor: string): number {
  const [r, c] = valor.split('.');
  return Number(r) * 100 + Number(c);
}
function valorOf(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

export class FakeEfiPayout {
  readonly clock: Clock;
  readonly pki: Pki;
  readonly chave: string;
  readonly serverCertificate: KeyPair;
  readonly callbackCertificate: KeyPair;
  client!: { clientId: string; clientSecret: string; cert: string; key: string; ca: string };
  origin = '';
  saldoCents: number;
  readonly sent = new Map<string, SentPix>();
  /** Whose the keys are at the DICT (key as sent -> CPF or CNPJ): a favorecido's document is checked against it. */
  readonly keyOwners = new Map<string, string>();
  readonly requests: { method: string; path: string; status?: number; dropped?: boolean }[] = [];
  readonly callbacks: CallbackRecord[] = [];
  webhookUrl: string | null = null;
  /** Hold the final states' webhooks (a webhook that never comes). */
  holdCallbacks = false;
  private readonly ownPki: boolean;
  private readonly tokens = new Set<string>();
  private faults: (EfiFault & { left: number })[] = [];
  private server?: Server;

  constructor(options: FakeEfiPayoutOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.ownPki = !options.pki;
    this.pki = options.pki ?? createPki({ caName: 'Fake Efí CA' });
    this.chave = options.chave ?? 'b7d3f4a2-5c1e-4f8a-9d2b-3e6f7a8b9c0d';
    this.saldoCents = options.saldoCents ?? 100_000_000;
    this.serverCertificate = this.pki.issueServer('fake-efi');
    this.callbackCertificate = this.pki.issueClient('fake-efi-callbacks');
  }

  get baseUrl(): string {
    return this.origin;
  }

  async start(): Promise<this> {
    const pair = this.pki.issueClient('efi-client');
    this.client = { clientId: 'Client_Id_fake', clientSecret: 'Client_Secret_' + randomBytes(8).toString('hex'), cert: pair.cert, key: pair.key, ca: this.pki.ca };
    this.server = createServer(
      { key: this.serverCertificate.key, cert: this.serverCertificate.cert, ca: [this.pki.ca], requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' },
      (req, res) => void this.handle(req, res),
    );
    this.server.on('tlsClientError', () => {});
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(0, '127.0.0.1', () => resolve());
    });
    this.origin = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    if (this.server) {
      this.server.closeAllConnections();
      await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    }
    if (this.ownPki) this.pki.dispose();
  }

  inject(fault: EfiFault): void {
    this.faults.push({ ...fault, left: fault.times ?? 1 });
  }

  clearFaults(): void {
    this.faults = [];
  }

  /**
   * The PSP finishes what is processing (each by the homologation rule on its amount) and sends
   * the webhooks (unless held); `only`: just these idEnvios. Returns the idEnvios settled.
   */
  async settleAll(only?: string[]): Promise<string[]> {
    const done: string[] = [];
    for (const s of this.sent.values()) {
      if (s.status !== 'EM_PROCESSAMENTO' || (only && !only.includes(s.idEnvio))) continue;
      s.status = s.outcome;
      s.liquidacaoMs = this.clock.nowMs();
      if (s.outcome === 'NAO_REALIZADO') {
        s.erro = { codigo: 'conta_invalida', motivo: 'Conta do favorecido encerrada ou inexistente (homologação: valor entre R$ 10,01 e R$ 20,00)' };
        this.saldoCents += centsOf(s.valor);
      }
      done.push(s.idEnvio);
    }
    if (!this.holdCallbacks && done.length > 0) await this.notify(done);
    return done;
  }

  /** POST the webhook for these payouts as they are now (the PSP's own, with its certificate). */
  async notify(idEnvios: string[], bodyOverride?: unknown): Promise<CallbackRecord> {
    if (!this.webhookUrl) throw new Error('fake Efí: no webhook registered');
    const body = bodyOverride ?? { pix: idEnvios.map((id) => this.webhookItem(this.sent.get(id)!)) };
    return this.deliver(`${this.webhookUrl.replace(/\/+$/, '')}/pix`, body);
  }

  webhookItem(s: SentPix): Record<string, unknown> {
    return {
      endToEndId: s.endToEndId, valor: s.valor, chave: s.chave, horario: new Date(s.liquidacaoMs ?? s.solicitacaoMs).toISOString(),
      status: s.status, tipo: 'SOLICITACAO', gnExtras: { idEnvio: s.idEnvio, ...(s.erro ? { erro: s.erro } : {}) },
    };
  }

  private deliver(url: string, body: unknown): Promise<CallbackRecord> {
    const record: CallbackRecord = { url, body };
    this.callbacks.push(record);
    const payload = JSON.stringify(body);
    return new Promise((resolve) => {
      const req = httpsRequest(url, {
        method: 'POST', ca: [this.pki.ca], cert: this.callbackCertificate.cert, key: this.callbackCertificate.key, agent: false, timeout: 5000,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) },
      }, (res) => {
        record.status = res.statusCode;
        res.resume();
        res.on('end', () => resolve(record));
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (err) => {
        record.error = err.message;
        resolve(record);
      });
      req.end(payload);
    });
  }

  private newE2eId(): string {
    const stamp = new Date(this.clock.nowMs()).toISOString().replace(/[-:T]/g, '').slice(0, 12);
    return `E${PSP_ISPB}${stamp}${randomBytes(6).toString('hex').slice(0, 11)}`;
  }

  private view(s: SentPix): Record<string, unknown> {
    return {
      endToEndId: s.endToEndId, idEnvio: s.idEnvio, valor: s.valor, chave: s.chave, status: s.status,
      ...(s.infoPagador ? { infoPagador: s.infoPagador } : {}),
      horario: { solicitacao: new Date(s.solicitacaoMs).toISOString(), ...(s.liquidacaoMs ? { liquidacao: new Date(s.liquidacaoMs).toISOString() } : {}) },
      favorecido: s.favorecido,
      ...(s.erro ? { gnExtras: { erro: s.erro } } : {}),
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', this.origin);
    const entry: { method: string; path: string; status?: number; dropped?: boolean } = { method: req.method ?? 'GET', path: url.pathname };
    this.requests.push(entry);
    const send = (status: number, body?: unknown) => {
      entry.status = status;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    let body: Record<string, unknown> | null = null;
    if (text) {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return send(400, { nome: 'json_invalido', mensagem: 'Corpo não é JSON' });
      }
    }
    if (req.method === 'POST' && url.pathname === '/oauth/token') {
      const basic = Buffer.from(`${this.client.clientId}:${this.client.clientSecret}`).toString('base64');
      if (req.headers.authorization !== `Basic ${basic}` || body?.grant_type !== 'client_credentials') return send(401, { error: 'invalid_client' });
      const token = randomBytes(24).toString('hex');
      this.tokens.add(token);
      return send(200, { access_token: token, token_type: 'Bearer', expires_in: 3600, scope: 'pix.send pix.read gn.balance.read webhook.write webhook.read' });
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token || !this.tokens.has(token)) return send(401, { nome: 'nao_autorizado', mensagem: 'Token inválido' });

    const route = (() => {
      if (req.method === 'PUT' && /^\/v3\/gn\/pix\/[^/]+$/.test(url.pathname)) return 'PUT /v3/gn/pix';
      if (req.method === 'GET' && /^\/v2\/gn\/pix\/enviados\/id-envio\/[^/]+$/.test(url.pathname)) return 'GET /v2/gn/pix/enviados/id-envio';
      if (req.method === 'GET' && url.pathname === '/v2/gn/saldo') return 'GET /v2/gn/saldo';
      if (req.method === 'GET' && url.pathname === '/v2/pix') return 'GET /v2/pix';
      if (/^\/v2\/webhook\/[^/]+$/.test(url.pathname)) return `${req.method} /v2/webhook`;
      return null;
    })();
    const fault = this.faults.find((f) => f.left > 0 && (!f.operation || f.operation === route));
    if (fault) {
      fault.left--;
      if (fault.kind === 'unavailable') return send(503, { nome: 'servico_indisponivel', mensagem: 'Serviço indisponível' });
    }
    const answer = this.route(route, url, body);
    if (fault?.kind === 'drop') {
      entry.dropped = true;
      res.destroy();
      return;
    }
    send(answer.status, answer.body);
  }

  private route(route: string | null, url: URL, body: Record<string, unknown> | null): { status: number; body?: unknown } {
    const last = decodeURIComponent(url.pathname.split('/').pop() ?? '');
    switch (route) {
      case 'PUT /v3/gn/pix': {
        if (!ID_ENVIO.test(last)) return { status: 400, body: { nome: 'id_envio_invalido', mensagem: 'idEnvio deve ter de 1 a 35 letras e dígitos' } };
        if (this.sent.has(last)) return { status: 409, body: { nome: 'id_envio_duplicado', mensagem: 'Já existe um envio com este idEnvio' } };
        const valor = body?.valor;
        const pagador = body?.pagador as Record<string, unknown> | undefined;
        const fav = body?.favorecido as Record<string, unknown> | undefined;
        if (typeof valor !== 'string' || !VALOR.test(valor) || centsOf(valor) === 0) return { status: 400, body: { nome: 'valor_invalido', mensagem: 'valor deve ser como "10.50" e positivo' } };
        if (pagador?.chave !== this.chave) return { status: 400, body: { nome: 'chave_pagador_invalida', mensagem: 'A chave do pagador não pertence a esta conta' } };
        if (!fav || (typeof fav.chave !== 'string') === (typeof fav.contaBanco !== 'object')) return { status: 400, body: { nome: 'favorecido_invalido', mensagem: 'Informe a chave ou a conta do favorecido' } };
        if (fav.contaBanco) {
          const c = fav.contaBanco as Record<string, unknown>;
          const doc = typeof c.cpf === 'string' ? /^\d{11}$/.test(c.cpf) : typeof c.cnpj === 'string' && /^[0-9A-Z]{12}\d{2}$/.test(c.cnpj);
          if (typeof c.nome !== 'string' || !doc || typeof c.codigoBanco !== 'string' || !/^\d{8}$/.test(c.codigoBanco) || typeof c.agencia !== 'string' || !/^\d{1,5}$/.test(c.agencia)
            || typeof c.conta !== 'string' || !/^[0-9X]{2,21}$/.test(c.conta) || !['cacc', 'svgs', 'tran'].includes(String(c.tipoConta))) {
            return { status: 400, body: { nome: 'conta_favorecido_invalida', mensagem: 'contaBanco incompleta ou inválida' } };
          }
        }
        if (typeof fav.chave === 'string' && this.keyOwners.has(fav.chave)) {
          const doc = typeof fav.cpf === 'string' ? fav.cpf : typeof fav.cnpj === 'string' ? fav.cnpj : null;
          if (doc !== null && doc !== this.keyOwners.get(fav.chave)) return { status: 400, body: { nome: 'documento_favorecido_divergente', mensagem: 'A chave informada não pertence ao CPF/CNPJ do favorecido' } };
        }
        const cents = centsOf(valor);
        // Homologation: above R$ 20,00 refused at once.
        if (cents > 2000) return { status: 400, body: { nome: 'envio_recusado', mensagem: 'Envio recusado (homologação: valor acima de R$ 20,00)' } };
        if (cents > this.saldoCents) return { status: 400, body: { nome: 'saldo_insuficiente', mensagem: 'Saldo insuficiente para o envio' } };
        this.saldoCents -= cents;
        const s: SentPix = {
          idEnvio: last, endToEndId: this.newE2eId(), valor, chave: this.chave, favorecido: fav, status: 'EM_PROCESSAMENTO',
          outcome: cents <= 1000 ? 'REALIZADO' : 'NAO_REALIZADO', solicitacaoMs: this.clock.nowMs(),
          ...(typeof pagador.infoPagador === 'string' ? { infoPagador: pagador.infoPagador } : {}),
        };
        this.sent.set(last, s);
        return { status: 201, body: { idEnvio: s.idEnvio, e2eId: s.endToEndId, valor: s.valor, horario: { solicitacao: new Date(s.solicitacaoMs).toISOString() }, status: s.status } };
      }
      case 'GET /v2/gn/pix/enviados/id-envio': {
        const s = this.sent.get(last);
        return s ? { status: 200, body: this.view(s) } : { status: 404, body: { nome: 'pix_nao_encontrado', mensagem: 'Nenhum Pix enviado com este idEnvio' } };
      }
      case 'GET /v2/pix':
        // Received Pix (the API Pix's GET /pix, which the Pix reconciliation asks): none here.
        return { status: 200, body: { parametros: { inicio: url.searchParams.get('inicio'), fim: url.searchParams.get('fim'), paginacao: { paginaAtual: 0, itensPorPagina: 100, quantidadeDePaginas: 1, quantidadeTotalDeItens: 0 } }, pix: [] } };
      case 'GET /v2/gn/saldo':
        return { status: 200, body: { saldo: valorOf(this.saldoCents) } };
      case 'PUT /v2/webhook':
        if (last !== this.chave) return { status: 400, body: { nome: 'chave_invalida', mensagem: 'Chave não pertence a esta conta' } };
        this.webhookUrl = typeof body?.webhookUrl === 'string' ? body.webhookUrl : null;
        return { status: 200, body: { webhookUrl: this.webhookUrl } };
      case 'GET /v2/webhook':
        return this.webhookUrl ? { status: 200, body: { webhookUrl: this.webhookUrl, chave: this.chave, criacao: new Date(this.clock.nowMs()).toISOString() } } : { status: 404, body: { nome: 'webhook_nao_encontrado', mensagem: 'Nenhum webhook' } };
      default:
        return { status: 404, body: { nome: 'rota_inexistente', mensagem: 'Rota não encontrada' } };
    }
  }
}

export async function startFakeEfiPayout(options: FakeEfiPayoutOptions = {}): Promise<FakeEfiPayout> {
  return new FakeEfiPayout(options).start();
}
