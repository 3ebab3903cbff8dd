// The page's calls, all to its own origin and all with the session's client secret: the
// session, the card token and the payment. The page holds no key of the merchant's. Nothing else
// leaves the page.
export interface PixView {
  copyPaste: string;
  qrCodeSvg: string;
  expiresAt: string;
}
export interface NextActionView {
  type: 'redirect';
  url: string;
  method: 'GET' | 'POST';
  expiresAt: string;
  returnUrl: string | null;
}
export interface PaymentView {
  id: string;
  method: 'credit_card' | 'pix';
  status: string;
  failureMessage: string | null;
  pix: PixView | null;
  nextAction: NextActionView | null;
}
// Live mode with a card acquirer: the card is encrypted in this browser by the acquirer's own
// library (loaded from `origin`, the one other origin the page's CSP allows), never read here.
export interface CardEncryptionView {
  acquirer: 'adyen';
  environment: 'live' | 'test';
  clientKey: string;
  origin: string;
  scriptUrl: string;
}
export interface EncryptedCard {
  encryptedCardNumber: string;
  encryptedExpiryMonth: string;
  encryptedExpiryYear: string;
  encryptedSecurityCode: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  holderName?: string;
}
// What n installments really bill (the server's domain/installments.ts): the amounts sum to the total.
export interface InstallmentPlan {
  count: number;
  amounts: number[];
  groups: Array<{ times: number; amount: number }>;
  total: number;
}
export interface SessionView {
  id: string;
  status: 'open' | 'complete' | 'expired';
  amount: number;
  currency: string;
  description: string | null;
  merchantName: string;
  logoUrl: string | null;
  accentColor: string | null;
  platformName: string;
  methods: Array<'credit_card' | 'pix'>;
  installments: number;
  installmentPlans: InstallmentPlan[];
  expiresAt: string;
  livemode: boolean;
  successUrl: string | null;
  cancelUrl: string | null;
  payment: PaymentView | null;
  cardEncryption: CardEncryptionView | null;
}

export class ApiFailure extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly param?: string) {
    super(message);
  }
}

// The server's clock as this browser sees it (from each answer's Date header, 1 s precision):
// expiry and the Pix countdown follow the server, not a buyer's clock that is minutes off.
let clockOffsetMs = 0;
export function serverNow(): number {
  return Date.now() + clockOffsetMs;
}

function key(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function call<T>(method: 'GET' | 'POST', path: string, bearer: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    // One key per attempt: a retried network call of the same attempt cannot pay twice.
    headers['idempotency-key'] = key();
  }
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new ApiFailure(0, 'NETWORK', 'network');
  }
  const date = Date.parse(res.headers.get('date') ?? '');
  if (Number.isFinite(date)) {
    const offset = date - Date.now();
    // Within the header's own second, the local clock is as good.
    clockOffsetMs = Math.abs(offset) > 1500 ? offset : 0;
  }
  // The API's error envelope (`{ error: { code, message, param? } }`); anything else is read as no details.
  const json = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string; param?: string } } | null;
  if (!res.ok) {
    const e = json?.error ?? {};
    throw new ApiFailure(res.status, String(e.code ?? 'UNKNOWN'), String(e.message ?? res.statusText), e.param);
  }
  return json as T;
}

export const api = {
  session: (id: string, secret: string) => call<SessionView>('GET', `/v1/checkout/sessions/${encodeURIComponent(id)}/client`, secret),
  pay: (id: string, secret: string, body: { method: 'credit_card'; cardToken: string; installments?: number } | { method: 'pix' }) =>
    call<SessionView>('POST', `/v1/checkout/sessions/${encodeURIComponent(id)}/client/pay`, secret, body),
  token: (secret: string, card: { number: string; expMonth: number; expYear: number; cvc: string; holderName: string }) =>
    call<{ id: string }>('POST', '/v1/tokens', secret, { card }),
  // Live: only what the acquirer's library encrypted (and what may be shown: brand, last four, expiry).
  encryptedToken: (secret: string, encryptedCard: EncryptedCard) => call<{ id: string }>('POST', '/v1/tokens', secret, { encryptedCard }),
};
