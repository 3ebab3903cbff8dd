import { APIResource, segment, type APIPromise, type RequestOptions } from '../core.js';
import type { PagePromise } from '../pagination.js';
import type { Payment, PaymentCreateParams, PaymentListParams } from '../types.js';

export class Payments extends APIResource {
  /** Creates a payment: shape B `{ amountInCents, method, cardToken }` (card or Pix), or shape A `{ amount, currency, method: 'pix' }`. Answers `status: 'pending'`. */
  create(params: PaymentCreateParams, options?: RequestOptions): APIPromise<Payment> {
    return this.client.request({ method: 'POST', path: '/v1/payments', body: params }, options);
  }

  retrieve(id: string, options?: RequestOptions): APIPromise<Payment> {
    return this.client.request({ method: 'GET', path: `/v1/payments/${segment(id)}` }, options);
  }

  /** Newest first; await it for a page, or `for await` it for every payment. */
  list(params: PaymentListParams = {}, options?: RequestOptions): PagePromise<Payment, PaymentListParams> {
    return this.client.list('/v1/payments', params, options);
  }

  /** Cancels a pending payment (409 INVALID_STATE otherwise). */
  cancel(id: string, options?: RequestOptions): APIPromise<Payment> {
    return this.client.request({ method: 'POST', path: `/v1/payments/${segment(id)}/cancel` }, options);
  }
}
