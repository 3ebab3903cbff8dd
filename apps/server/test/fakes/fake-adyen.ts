// A fake Adyen for tests: the Checkout API v71 on 127.0.0.1, driven by Adyen's own contract
// (adyen/checkout-v71.trimmed.json, trimmed from Adyen/adyen-openapi as adyen/NOTICE says).
// openapi-backend routes every request and validates it (path, headers, body) against the
// contract before anything happens; every answer is checked against the contract's response
// schema, and every notification the fake sends against Webhooks-v1's: a violation is recorded
// in `contractViolations` and the answer becomes a 500, so a test notices.
//
// State in memory: payments by pspReference (with their captures, refunds, cancels), the
// Idempotency-Key answers (a repeat with the same key and body answers the first answer). Adyen
// decides by the card number; the "encrypted" fields of tests are `adyenjs_0_1_25$<clear>`
// (fakeEncrypt), which only this fake reads.
//
// Notifications: for every authorisation and modification, a standard notification batch is
// POSTed to the webhook URL, signed with HMAC-SHA256 exactly as Adyen documents it. They can be
// held, released out of order or twice, dropped, or sent with a bad signature.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpenAPIBackend, type Context, type Document } from 'openapi-backend';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { systemClock, type Clock } from '../../src/clock.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

const here = dirname(fileURLToPath(import.meta.url));
export const CHECKOUT_CONTRACT = join(here, 'adyen', 'checkout-v71.trimmed.json');
export const WEBHOOKS_CONTRACT = join(here, 'adyen', 'webhooks-v1.trimmed.json');

// The test cards (the fake's decisions), in the spirit of Adyen's test card numbers.
export const ADYEN_TEST_CARDS = {
  approved: '4111111111111111',
  refused: '4000000000000002',
  noFunds: '4000000000009995',
  error: '4000000000000119',
  // Received: decided later (AUTHORISATION notification, success=true)
  received: '4000000000000259',
  // 3-D Secure 2 through a redirect: the test passes or fails the challenge (passChallenge)
  threeDs: '4212345678910006',
} as const;

// A stand-in for Adyen Web (https://checkoutshopper-*.adyen.com/checkoutshopper/sdk/<v>/adyen.js),
// with the part of its interface the hosted page uses: `AdyenCheckout({environment, clientKey})`
// resolves to a checkout whose `create('card', {onBrand, onFieldValid, onChange})` mounts card
// fields and gives `isValid` and `data.paymentMethod` (type scheme and the four encrypted
// fields). Adyen's real secured fields are frames of its origin; this one draws plain inputs,
// and "encrypts" as fakeEncrypt does (this fake reads it back; no number in clear). It is served only by the fake.
export const ADYEN_WEB_STANDIN = `(() => {
  const enc = (v) => 'adyenjs_0_1_25$' + btoa(Array.from(String(v), (c) => String.fromCharCode(c.charCodeAt(0) ^ 0x5a)).join('')).replace(/[+]/g, '-').replace(/[/]/g, '_').replace(/=+$/, '');
  const brandOf = (n) => /^4/.test(n) ? 'visa' : /^5[1-5]/.test(n) ? 'mc' : /^3[47]/.test(n) ? 'amex' : 'unknown';
  window.AdyenCheckout = (config) => {
    if (!config || !/^(test|live)_[A-Za-z0-9]+$/.test(String(config.clientKey))) return Promise.reject(new Error('AdyenCheckout: invalid clientKey'));
    return Promise.resolve({
      create(type, opts = {}) {
        if (type !== 'card') throw new Error('stand-in: card only');
        const inputs = {};
        let root = null;
        const digits = (v) => String(v || '').replace(/\\D/g, '');
        const values = () => {
          const number = digits(inputs.number.value);
          const m = /^(\\d{2})\\s*\\/\\s*(\\d{2})$/.exec(inputs.expiry.value.trim());
          return { number, month: m ? m[1] : '', year: m ? '20' + m[2] : '', cvc: digits(inputs.cvc.value) };
        };
        const component = {
          mount(target) {
            root = typeof target === 'string' ? document.querySelector(target) : target;
            const field = (key, label, autocomplete) => {
              const id = 'adyen-standin-' + key;
              const wrap = document.createElement('div');
              wrap.className = 'adyen-checkout__field';
              const l = document.createElement('label');
              l.htmlFor = id;
              l.textContent = label;
              const input = document.createElement('input');
              input.id = id;
              input.inputMode = 'numeric';
              input.autocomplete = autocomplete;
              input.className = 'adyen-checkout__input';
              input.addEventListener('input', () => {
                const v = values();
                if (key === 'number') {
                  opts.onBrand && opts.onBrand({ brand: brandOf(v.number) });
                  if (v.number.length >= 12) opts.onFieldValid && opts.onFieldValid({ fieldType: 'encryptedCardNumber', valid: true, endDigits: v.number.slice(-4) });
                }
                if (key === 'expiry' && v.month) opts.onFieldValid && opts.onFieldValid({ fieldType: 'encryptedExpiryDate', valid: true, expiryDate: v.month + '/' + v.year.slice(2) });
                opts.onChange && opts.onChange({ isValid: component.isValid, data: component.data });
              });
              inputs[key] = input;
              wrap.append(l, input);
              return wrap;
            };
            root.replaceChildren(field('number', 'Número do cartão', 'cc-number'), field('expiry', 'Data de validade (MM/AA)', 'cc-exp'), field('cvc', 'Código de segurança', 'cc-csc'));
            return component;
          },
          get isValid() {
            const v = values();
            return v.number.length >= 12 && !!v.month && v.cvc.length >= 3;
          },
          get data() {
            const v = values();
            return { paymentMethod: { type: 'scheme', encryptedCardNumber: enc(v.number), encryptedExpiryMonth: enc(v.month), encryptedExpiryYear: enc(v.year), encryptedSecurityCode: enc(v.cvc), brand: brandOf(v.number) } };
          },
          showValidation() {},
          unmount() { if (root) root.replaceChildren(); },
        };
        return component;
      },
    });
  };
})();
`;

// Not encryption, but no card number in clear either (so a test can look for one): each byte
// XORed with 0x5A, base64url, behind Adyen's prefix. Only this fake reads it back.
export function fakeEncrypt(clear: string): string {
  return `adyenjs_0_1_25$${Buffer.from(Buffer.from(clear, 'utf8').map((b) => b ^ 0x5a)).toString('base64url')}`;
}

function decrypt(field: unknown): string | null {
  if (typeof field !== 'string' || !field.startsWith('adyenjs_0_1_25$')) return null;
  return Buffer.from(Buffer.from(field.slice('adyenjs_0_1_25$'.length), 'base64url').map((b) => b ^ 0x5a)).toString('utf8');
}

export interface FakePayment {
  pspReference: string;
  reference: string;
  amount: { value: number; currency: string };
  installments: number | null;
  status: 'Authorised' | 'Refused' | 'Error' | 'Received' | 'RedirectShopper' | 'Cancelled';
  refusalReason: string | null;
  modifications: { kind: 'capture' | 'refund' | 'cancel'; pspReference: string; reference: string; amount: number | null; outcome: 'pending' | 'success' | 'failed' }[];
  redirectToken: string | null;
  returnUrl: string | null;
}

export type Fault = { kind: 'unavailable' | 'slow' | 'drop'; operation?: string; applied?: boolean; times?: number; delayMs?: number };

export interface SentNotification {
  eventCode: string;
  body: Record<string, unknown>;
  status: number | null;
  answer: string | null;
  error: string | null;
}

export interface FakeAdyen {
  baseUrl: string;
  apiKey: string;
  hmacKey: string;
  merchantAccount: string;
  clientKey: string;
  payments: Map<string, FakePayment>;
  requests: { operation: string; status: number; idempotencyKey: string | null; body: unknown }[];
  notifications: SentNotification[];
  contractViolations: string[];
  // What a browser asked of this origin (Adyen Web's script, the issuer's challenge page).
  browserRequests: string[];
  setWebhook(url: string): void;
  inject(fault: Fault): void;
  holdNotifications(): void;
  releaseNotifications(options?: { order?: 'reverse'; duplicate?: boolean }): Promise<void>;
  discardHeldNotifications(): number;
  // Sends a notification again (the last one by default): a duplicate.
  resend(n?: SentNotification): Promise<SentNotification>;
  // Sends the notification with a signature made with another key.
  sendForged(n: SentNotification): Promise<SentNotification>;
  // Adyen's answers to modifications: refunds refused (REFUND success=false) from now on.
  refuseRefunds(on: boolean): void;
  // Captures received, then failed at the acquirer (CAPTURE_FAILED) from now on.
  failCaptures(on: boolean): void;
  // The buyer at the issuer's 3-D Secure page: passes (or fails) the challenge; returns the
  // redirectResult the buyer's browser brings back to the returnUrl.
  passChallenge(pspReference: string, pass: boolean): string;
  // A Received payment decided: the AUTHORISATION notification.
  decide(pspReference: string, success: boolean): Promise<void>;
  // A dispute notification (REQUEST_FOR_INFORMATION, NOTIFICATION_OF_CHARGEBACK, CHARGEBACK,
  // CHARGEBACK_REVERSED, SECOND_CHARGEBACK) about the payment `pspReference`, signed like the
  // others. Every stage of one dispute carries the same dispute pspReference (returned), as
  // Adyen's do; `disputePspReference` names another dispute of the same payment. `additionalData`
  // as Adyen sends it: disputeStatus, defensePeriodEndsAt, chargebackReasonCode, ...
  dispute(pspReference: string, eventCode: string, options?: { disputePspReference?: string; amount?: number; reason?: string; additionalData?: Record<string, string> }): Promise<string>;
  idle(): Promise<void>;
  close(): Promise<void>;
}

function pspRef(): string {
  return randomBytes(12).toString('hex').toUpperCase().replace(/[^A-Z0-9]/g, '').slice(0, 16).padEnd(16, '0');
}

// Adyen's HMAC of a notification item (docs.adyen.com, "Verify HMAC signatures"), written here
// from the documentation and not shared with the server's code.
export function adyenHmac(hexKey: string, item: Record<string, unknown>): string {
  const amount = (item.amount ?? {}) as { value?: number; currency?: string };
  const fields = [item.pspReference, item.originalReference, item.merchantAccountCode, item.merchantReference, amount.value, amount.currency, item.eventCode, item.success];
  return createHmac('sha256', Buffer.from(hexKey, 'hex')).update(fields.map((f) => (typeof f === 'string' ? f : typeof f === 'number' || typeof f === 'boolean' ? String(f) : '')).join(':')).digest('base64');
}

export async function startFakeAdyen(options: { clock?: Clock; merchantAccount?: string } = {}): Promise<FakeAdyen> {
  const clock = options.clock ?? systemClock;
  const merchantAccount = options.merchantAccount ?? 'LojaECOM';
  const apiKey = 'AQE' + randomBytes(24).toString('base64url');
  const hmacKey = randomBytes(32).toString('hex').toUpperCase();
  const checkout = JSON.parse(readFileSync(CHECKOUT_CONTRACT, 'utf8')) as Document;
  const webhooksDoc = JSON.parse(readFileSync(WEBHOOKS_CONTRACT, 'utf8')) as { webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: { $ref: string } } } } } }> };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...webhooksDoc, $id: 'webhooks.json' });

  const payments = new Map<string, FakePayment>();
  // A payment's dispute: its pspReference, the same for every stage.
  const disputes = new Map<string, string>();
  const idempotency = new Map<string, { hash: string; status: number; body: unknown }>();
  const requests: FakeAdyen['requests'] = [];
  const browserRequests: string[] = [];
  const notifications: SentNotification[] = [];
  const contractViolations: string[] = [];
  const faults: Fault[] = [];
  const inFlight = new Set<Promise<unknown>>();
  let webhookUrl: string | null = null;
  let holding = false;
  let held: { eventCode: string; body: Record<string, unknown> }[] = [];
  let refundsRefused = false;
  let capturesFailed = false;

  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p)).catch(() => undefined);
    return p;
  };

  function item(eventCode: string, fields: { pspReference: string; originalReference?: string; merchantReference: string; amount?: { value: number; currency: string }; success: boolean; reason?: string; additionalData?: Record<string, string> }) {
    const it: Record<string, unknown> = {
      eventCode,
      success: fields.success ? 'true' : 'false',
      pspReference: fields.pspReference,
      ...(fields.originalReference ? { originalReference: fields.originalReference } : {}),
      merchantReference: fields.merchantReference,
      merchantAccountCode: merchantAccount,
      amount: fields.amount ?? { value: 0, currency: 'BRL' },
      eventDate: new Date(clock.nowMs()).toISOString().replace(/\.\d{3}Z$/, '+00:00'),
      ...(fields.reason ? { reason: fields.reason } : {}),
    };
    it.additionalData = { ...fields.additionalData, hmacSignature: adyenHmac(hmacKey, it) };
    return { live: 'false', notificationItems: [{ NotificationRequestItem: it }] };
  }

  function checkNotification(eventCode: string, body: unknown): void {
    const hook = webhooksDoc.webhooks[`/${eventCode}`];
    if (!hook) {
      contractViolations.push(`notification ${eventCode}: not in the trimmed Webhooks contract`);
      return;
    }
    const ref = hook.post.requestBody.content['application/json'].schema.$ref;
    const validate = ajv.getSchema(`webhooks.json${ref}`);
    if (validate && !validate(body)) contractViolations.push(`notification ${eventCode}: ${ajv.errorsText(validate.errors)}`);
  }

  async function deliver(eventCode: string, body: Record<string, unknown>): Promise<SentNotification> {
    const sent: SentNotification = { eventCode, body, status: null, answer: null, error: null };
    notifications.push(sent);
    if (!webhookUrl) {
      sent.error = 'no webhook';
      return sent;
    }
    try {
      const res = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      sent.status = res.status;
      sent.answer = await res.text();
    } catch (error) {
      sent.error = (error as Error).message;
    }
    return sent;
  }

  function notify(eventCode: string, body: Record<string, unknown>): void {
    checkNotification(eventCode, body);
    if (holding) {
      held.push({ eventCode, body });
      return;
    }
    // Asynchronous, as Adyen's: after the answer that caused it.
    void track(new Promise((resolve) => setImmediate(resolve)).then(() => deliver(eventCode, body)));
  }

  function serviceError(status: number, errorCode: string, message: string, errorType: string) {
    return { status, body: { status, errorCode, message, errorType } };
  }

  function decideCard(paymentMethod: Record<string, unknown>): { status: FakePayment['status']; refusalReason: string | null } {
    const number = decrypt(paymentMethod.encryptedCardNumber) ?? (typeof paymentMethod.number === 'string' ? paymentMethod.number : null);
    switch (number) {
      case ADYEN_TEST_CARDS.refused: return { status: 'Refused', refusalReason: 'Refused' };
      case ADYEN_TEST_CARDS.noFunds: return { status: 'Refused', refusalReason: 'Not enough balance' };
      case ADYEN_TEST_CARDS.error: return { status: 'Error', refusalReason: 'Acquirer Error' };
      case ADYEN_TEST_CARDS.received: return { status: 'Received', refusalReason: null };
      case ADYEN_TEST_CARDS.threeDs: return { status: 'RedirectShopper', refusalReason: null };
      default: return number ? { status: 'Authorised', refusalReason: null } : { status: 'Refused', refusalReason: 'CVC Declined' };
    }
  }

  function paymentAnswer(p: FakePayment) {
    const base: Record<string, unknown> = { pspReference: p.pspReference, resultCode: p.status, merchantReference: p.reference, amount: p.amount };
    if (p.refusalReason) base.refusalReason = p.refusalReason;
    if (p.status === 'RedirectShopper') {
      base.action = { type: 'redirect', method: 'GET', url: `${server.baseUrl}/threeds2/challenge/${p.redirectToken}`, paymentMethodType: 'scheme' };
    }
    return base;
  }

  type Answer = { status: number; body: unknown };
  const handlers: Record<string, (c: Context) => Answer> = {
    'post-payments': (c) => {
      const body = c.request.requestBody as { merchantAccount: string; reference: string; amount: { value: number; currency: string }; paymentMethod: Record<string, unknown>; installments?: { value?: number } };
      if (body.merchantAccount !== merchantAccount) return serviceError(403, '901', 'Invalid Merchant Account', 'security');
      const decision = decideCard(body.paymentMethod);
      const p: FakePayment = {
        pspReference: pspRef(), reference: body.reference, amount: body.amount, installments: body.installments?.value ?? null,
        status: decision.status, refusalReason: decision.refusalReason, modifications: [], redirectToken: decision.status === 'RedirectShopper' ? randomBytes(12).toString('hex') : null, returnUrl: (body as { returnUrl?: string }).returnUrl ?? null,
      };
      payments.set(p.pspReference, p);
      if (p.status === 'Authorised' || p.status === 'Refused' || p.status === 'Error') {
        notify('AUTHORISATION', item('AUTHORISATION', { pspReference: p.pspReference, merchantReference: p.reference, amount: p.amount, success: p.status === 'Authorised', reason: p.refusalReason ?? undefined }));
      }
      return { status: 200, body: paymentAnswer(p) };
    },
    'post-payments-details': (c) => {
      const body = c.request.requestBody as { details: { redirectResult?: string } };
      const result = body.details.redirectResult ?? '';
      const [token, verdict] = result.split('.');
      const p = [...payments.values()].find((x) => x.redirectToken !== null && x.redirectToken === token);
      if (!p) return serviceError(422, '101', 'Invalid redirectResult', 'validation');
      if (p.status === 'RedirectShopper') {
        p.status = verdict === 'Y' ? 'Authorised' : 'Refused';
        p.refusalReason = verdict === 'Y' ? null : '3D Not Authenticated';
        notify('AUTHORISATION', item('AUTHORISATION', { pspReference: p.pspReference, merchantReference: p.reference, amount: p.amount, success: p.status === 'Authorised', reason: p.refusalReason ?? undefined }));
      }
      const answer = paymentAnswer(p);
      delete answer.action;
      return { status: 200, body: answer };
    },
    'post-payments-paymentPspReference-captures': (c) => modification(c, 'capture'),
    'post-payments-paymentPspReference-refunds': (c) => modification(c, 'refund'),
    'post-payments-paymentPspReference-cancels': (c) => modification(c, 'cancel'),
    'post-cancels': (c) => {
      const body = c.request.requestBody as { merchantAccount: string; paymentReference: string; reference?: string };
      const p = [...payments.values()].find((x) => x.reference === body.paymentReference);
      const ref = pspRef();
      if (p) {
        p.modifications.push({ kind: 'cancel', pspReference: ref, reference: body.reference ?? '', amount: null, outcome: 'success' });
        if (p.status === 'Authorised' || p.status === 'Received' || p.status === 'RedirectShopper') p.status = 'Cancelled';
      }
      notify('TECHNICAL_CANCEL', item('TECHNICAL_CANCEL', { pspReference: ref, originalReference: p?.pspReference, merchantReference: body.paymentReference, success: true }));
      return { status: 201, body: { merchantAccount, paymentReference: body.paymentReference, pspReference: ref, status: 'received', ...(body.reference ? { reference: body.reference } : {}) } };
    },
  };

  function modification(c: Context, kind: 'capture' | 'refund' | 'cancel'): Answer {
    const psp = String(c.request.params.paymentPspReference);
    const body = c.request.requestBody as { merchantAccount: string; reference?: string; amount?: { value: number; currency: string } };
    const p = payments.get(psp);
    if (!p) return serviceError(422, '167', 'Original pspReference required for this operation', 'validation');
    const ref = pspRef();
    const amount = body.amount?.value ?? null;
    const outcome: 'success' | 'failed' = kind === 'refund' && refundsRefused ? 'failed' : kind === 'cancel' && p.status !== 'Authorised' ? 'failed' : 'success';
    p.modifications.push({ kind, pspReference: ref, reference: body.reference ?? '', amount, outcome });
    if (kind === 'cancel' && outcome === 'success') p.status = 'Cancelled';
    const eventCode = kind === 'capture' ? 'CAPTURE' : kind === 'refund' ? 'REFUND' : 'CANCELLATION';
    if (kind === 'capture' && capturesFailed) {
      // Received, then refused later by the acquirer: CAPTURE_FAILED (success true: the event happened).
      p.modifications[p.modifications.length - 1].outcome = 'failed';
      notify('CAPTURE_FAILED', item('CAPTURE_FAILED', { pspReference: ref, originalReference: psp, merchantReference: body.reference ?? p.reference, amount: body.amount ?? p.amount, success: true, reason: 'Capture refused by the issuer' }));
    } else notify(eventCode, item(eventCode, { pspReference: ref, originalReference: psp, merchantReference: body.reference ?? p.reference, amount: body.amount ?? p.amount, success: outcome === 'success', reason: outcome === 'failed' ? 'Refused' : undefined }));
    const answer: Record<string, unknown> = { merchantAccount, paymentPspReference: psp, pspReference: ref, status: 'received', ...(body.reference ? { reference: body.reference } : {}) };
    if (kind !== 'cancel') answer.amount = body.amount;
    return { status: 201, body: answer };
  }

  const api = new OpenAPIBackend({
    definition: checkout,
    strict: false,
    validate: true,
    // Validators compiled per operation when first used (the eager precompile of every schema
    // in this 3.1 document trips on shared, circular components).
    quick: true,
    ajvOpts: { strict: false },
    customizeAjv: (ajvInstance) => addFormats(ajvInstance),
    handlers: {
      validationFail: (c: Context) => serviceError(422, '14_030', `Request off the contract: ${(c.validation.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join('; ').slice(0, 500)}`, 'validation'),
      notFound: () => serviceError(404, '000', 'Not found', 'validation'),
      unauthorizedHandler: () => serviceError(401, '000', 'HTTP Status Response - Unauthorized', 'security'),
      methodNotAllowed: () => serviceError(405, '000', 'Method not allowed', 'validation'),
      ...Object.fromEntries(Object.entries(handlers).map(([id, h]) => [id, (c: Context) => h(c)])),
    },
  });
  // Adyen's document is OpenAPI 3.1, where a $ref may have siblings (a description); the
  // meta-schema check openapi-backend runs (openapi-schema-validator) refuses those 481 times and
  // then skips dereferencing altogether. The document is Adyen's as published: that check is
  // skipped, everything else (routing, request and response validation) runs.
  (api as unknown as { validateDefinition: () => void }).validateDefinition = () => undefined;
  // The contract's security: an API key (X-API-Key) or basic auth; we only hand out the key.
  api.registerSecurityHandler('ApiKeyAuth', (c: Context) => c.request.headers['x-api-key'] === apiKey);
  api.registerSecurityHandler('BasicAuth', () => false);
  await api.init();

  async function readBody(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  function send(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...extra });
    res.end(text);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    // The issuer's 3-D Secure page (not Adyen's API): the test's browser lands here, and a button
    // passes or fails the challenge, back to the payment's returnUrl with its redirectResult.
    if (req.method === 'GET' && url.pathname.startsWith('/threeds2/challenge/')) {
      browserRequests.push(url.pathname);
      const [token, done] = url.pathname.slice('/threeds2/challenge/'.length).split('/');
      const p = [...payments.values()].find((x) => x.redirectToken !== null && x.redirectToken === token);
      if (!p) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('no such challenge');
        return;
      }
      if (done === 'done' && p.returnUrl) {
        const back = new URL(p.returnUrl);
        back.searchParams.set('redirectResult', `${token}.${url.searchParams.get('result') === 'Y' ? 'Y' : 'N'}`);
        res.writeHead(302, { location: back.toString() });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html lang="pt-BR"><meta charset="utf-8"><title>3-D Secure</title><h1>Autenticação do banco emissor (fake)</h1><form method="get" action="/threeds2/challenge/${token}/done"><button name="result" value="Y">Autenticar</button> <button name="result" value="N">Recusar</button></form></html>`);
      return;
    }
    // Adyen Web, as the hosted page loads it from this origin (the account's clientOrigin): a
    // stand-in with the interface the page uses (ADYEN_WEB_STANDIN below).
    if (req.method === 'GET' && /^\/checkoutshopper\/sdk\/[0-9.]+\/adyen\.js$/.test(url.pathname)) {
      browserRequests.push(url.pathname);
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'access-control-allow-origin': '*' });
      res.end(ADYEN_WEB_STANDIN);
      return;
    }
    const text = await readBody(req);
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      return send(res, 400, { status: 400, errorCode: '702', message: 'Structure is not valid JSON', errorType: 'validation' });
    }
    const request = { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers as Record<string, string>, body };
    const operation = api.matchOperation(request);
    const opId = operation?.operationId ?? 'unknown';
    const idemKey = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
    const record = (status: number) => requests.push({ operation: opId, status, idempotencyKey: idemKey, body });
    if (req.headers['x-api-key'] !== apiKey) {
      record(401);
      return send(res, 401, { status: 401, errorCode: '000', message: 'HTTP Status Response - Unauthorized', errorType: 'security' });
    }
    const fault = faults.find((f) => !f.operation || f.operation === opId);
    if (fault && (fault.times = (fault.times ?? 1) - 1) <= 0) faults.splice(faults.indexOf(fault), 1);
    if (fault?.kind === 'unavailable' && fault.applied !== true) {
      record(503);
      return send(res, 503, { status: 503, errorCode: '000', message: 'Service unavailable', errorType: 'internal' });
    }
    // Idempotency: the same key and body answer the first answer; the same key with another
    // body is refused.
    const hash = createHash('sha256').update(text).digest('hex');
    const scope = `${opId}:${idemKey}`;
    let answer: Answer;
    const seen = idemKey ? idempotency.get(scope) : undefined;
    if (seen && seen.hash === hash) answer = { status: seen.status, body: seen.body };
    else if (seen) answer = serviceError(422, '704', 'Idempotency key already used for another request', 'validation');
    else {
      answer = (await api.handleRequest(request)) as Answer;
      if (operation && answer.status < 500) {
        const check = api.validateResponse(answer.body, operation, answer.status);
        if (check.errors?.length) {
          contractViolations.push(`${opId} ${answer.status}: ${check.errors.map((e: { instancePath: string; message?: string }) => `${e.instancePath} ${e.message}`).join('; ')}`);
          answer = { status: 500, body: { status: 500, errorCode: '000', message: 'fake answer off the contract', errorType: 'internal' } };
        }
      }
      if (idemKey && answer.status < 500) idempotency.set(scope, { hash, status: answer.status, body: answer.body });
    }
    record(answer.status);
    if (fault?.kind === 'unavailable') return send(res, 503, { status: 503, errorCode: '000', message: 'Service unavailable', errorType: 'internal' });
    if (fault?.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'slow') await new Promise((r) => clock.setTimeout(() => r(undefined), fault.delayMs ?? 60_000));
    if (res.destroyed) return;
    send(res, answer.status, answer.body, idemKey ? { 'idempotency-key': idemKey } : {});
  }

  const http: Server = createServer((req, res) => {
    void track(handle(req, res).catch((error) => {
      contractViolations.push(`fake crashed: ${(error as Error).stack}`);
      if (!res.headersSent) send(res, 500, { status: 500, errorCode: '000', message: 'fake crashed', errorType: 'internal' });
    }));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const server = { baseUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}/v71` };
  // openapi-backend matches paths without the server's /v71: strip it.
  const listeners = http.listeners('request');
  http.removeAllListeners('request');
  http.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/v71/')) req.url = req.url.slice(4);
    for (const l of listeners) (l as (a: IncomingMessage, b: ServerResponse) => void)(req, res);
  });

  const fake: FakeAdyen = {
    baseUrl: server.baseUrl,
    apiKey,
    hmacKey,
    merchantAccount,
    clientKey: 'test_' + randomBytes(12).toString('hex').toUpperCase(),
    payments,
    requests,
    notifications,
    contractViolations,
    browserRequests,
    setWebhook(url) {
      webhookUrl = url;
    },
    inject(fault) {
      faults.push({ times: 1, ...fault });
    },
    holdNotifications() {
      holding = true;
    },
    async releaseNotifications(opts = {}) {
      holding = false;
      let list = held;
      held = [];
      if (opts.order === 'reverse') list = [...list].reverse();
      for (const n of list) {
        await track(deliver(n.eventCode, n.body));
        if (opts.duplicate) await track(deliver(n.eventCode, n.body));
      }
    },
    discardHeldNotifications() {
      const n = held.length;
      held = [];
      holding = false;
      return n;
    },
    async resend(n) {
      const last = n ?? notifications[notifications.length - 1];
      return track(deliver(last.eventCode, last.body));
    },
    async sendForged(n) {
      const copy = JSON.parse(JSON.stringify(n.body)) as { notificationItems: { NotificationRequestItem: Record<string, unknown> }[] };
      for (const w of copy.notificationItems) (w.NotificationRequestItem.additionalData as Record<string, string>).hmacSignature = adyenHmac(randomBytes(32).toString('hex'), w.NotificationRequestItem);
      return track(deliver(n.eventCode, copy as unknown as Record<string, unknown>));
    },
    refuseRefunds(on) {
      refundsRefused = on;
    },
    failCaptures(on) {
      capturesFailed = on;
    },
    passChallenge(pspReference, pass) {
      const p = payments.get(pspReference);
      if (!p?.redirectToken) throw new Error(`no challenge for ${pspReference}`);
      return `${p.redirectToken}.${pass ? 'Y' : 'N'}`;
    },
    async decide(pspReference, success) {
      const p = payments.get(pspReference);
      if (!p || p.status !== 'Received') throw new Error(`${pspReference} is not Received`);
      p.status = success ? 'Authorised' : 'Refused';
      p.refusalReason = success ? null : 'Refused';
      notify('AUTHORISATION', item('AUTHORISATION', { pspReference: p.pspReference, merchantReference: p.reference, amount: p.amount, success, reason: p.refusalReason ?? undefined }));
      await fake.idle();
    },
    async dispute(pspReference, eventCode, opts = {}) {
      const p = payments.get(pspReference);
      if (!p) throw new Error(`no payment ${pspReference}`);
      let disputeRef = opts.disputePspReference;
      if (!disputeRef) {
        disputeRef = disputes.get(pspReference) ?? pspRef();
        disputes.set(pspReference, disputeRef);
      }
      const amount = opts.amount === undefined ? p.amount : { value: opts.amount, currency: p.amount.currency };
      const body = item(eventCode, { pspReference: disputeRef, originalReference: p.pspReference, merchantReference: p.reference, amount, success: true, reason: opts.reason ?? 'Fraudulent', additionalData: opts.additionalData });
      notify(eventCode, body);
      await fake.idle();
      return disputeRef;
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    async close() {
      await fake.idle();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections?.();
    },
  };
  return fake;
}
