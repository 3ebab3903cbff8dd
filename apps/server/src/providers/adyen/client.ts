import type { Clock, ClockTimer } from '../../clock.js';
import type { OpenedCardAccount } from '../connector.js';
import { ProviderRejected, ProviderUnavailable } from '../port.js';

// One client of Adyen's Checkout API (v71): JSON over HTTPS, the API key in `X-API-Key`, an
// `Idempotency-Key` on every POST (Adyen keeps the first answer to a key and gives it back to a
// repeat), a timeout on every call by our Clock. A 5xx, a 429, a timeout or a dropped connection
// is ProviderUnavailable (the outcome is unknown: repeat with the same key); any other 4xx is
// AdyenProblem (Adyen's ServiceError: status, errorCode, message, errorType).

export const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 1024 * 1024;

export interface AdyenResponse {
  status: number;
  body: unknown;
}

export class AdyenProblem extends ProviderRejected {
  constructor(readonly status: number, readonly error: { errorCode?: string; message?: string; errorType?: string }) {
    super(error.errorCode ? `adyen_${error.errorCode}` : `http_${status}`, `Adyen answered ${status}${error.errorType ? ` (${error.errorType})` : ''}: ${String(error.message ?? 'error').slice(0, 200)}`);
    this.name = 'AdyenProblem';
  }
}

export class AdyenClient {
  constructor(private readonly clock: Clock) {}

  async post(account: OpenedCardAccount, path: string, body: unknown, idempotencyKey: string): Promise<unknown> {
    const res = await this.send(account, 'POST', path, body, { 'idempotency-key': idempotencyKey });
    if (res.status >= 500 || res.status === 429) throw new ProviderUnavailable(`Adyen POST ${path.split('/').slice(0, 2).join('/')} answered ${res.status}`);
    if (res.status >= 200 && res.status < 300) return res.body;
    throw new AdyenProblem(res.status, res.body && typeof res.body === 'object' ? (res.body) : {});
  }

  private async send(account: OpenedCardAccount, method: string, path: string, body: unknown, headers: Record<string, string>): Promise<AdyenResponse> {
    const timeoutMs = account.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const controller = new AbortController();
    const timer: ClockTimer = this.clock.setTimeout(() => controller.abort(), timeoutMs);
    timer.unref?.();
    const url = account.settings.baseUrl.replace(/\/+$/, '') + path;
    try {
      const res = await fetch(url, {
        method,
        headers: { accept: 'application/json', 'content-type': 'application/json', 'x-api-key': account.secrets.apiKey, ...headers },
        body: JSON.stringify(body),
        signal: controller.signal,
        redirect: 'error',
      });
      const text = await res.text();
      if (text.length > MAX_BODY_BYTES) throw new ProviderUnavailable(`Adyen answer over ${MAX_BODY_BYTES} bytes`);
      let parsed: unknown = null;
      if (text.length > 0) {
        try {
          parsed = JSON.parse(text);
        } catch {
          if (res.status < 300) throw new ProviderUnavailable(`Adyen answered ${res.status} with a body that is not JSON`);
        }
      }
      return { status: res.status, body: parsed };
    } catch (error) {
      if (error instanceof ProviderUnavailable) throw error;
      if (controller.signal.aborted) throw new ProviderUnavailable(`Adyen did not answer within ${timeoutMs} ms`);
      const cause = (error as { cause?: { code?: string } }).cause;
      throw new ProviderUnavailable(`Adyen unreachable: ${cause?.code ?? (error as Error).message}`);
    } finally {
      this.clock.clearTimeout(timer);
    }
  }
}
