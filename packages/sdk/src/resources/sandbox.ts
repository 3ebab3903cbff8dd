import { APIResource, segment, type APIPromise, type RequestOptions } from '../core.js';
import type { Payment, SandboxAccount, SandboxAccountCreateParams } from '../types.js';

// Sandbox-only helpers (test keys): they are public operations of the API document, so the SDK
// has them, kept apart from the nine resources.
export class Sandbox extends APIResource {
  /** Pays a pending Pix payment as the payer would (sandbox only). */
  payPix(paymentId: string, options?: RequestOptions): APIPromise<Payment> {
    return this.client.request({ method: 'POST', path: `/v1/sandbox/payments/${segment(paymentId)}/pay` }, options);
  }

  /** A new merchant account with its sandbox keys (no key is sent; not idempotent, not retried). */
  createAccount(params: SandboxAccountCreateParams = {}, options?: RequestOptions): APIPromise<SandboxAccount> {
    return this.client.request({ method: 'POST', path: '/v1/sandbox/accounts', body: params, anonymous: true }, options);
  }
}
