import { APIResource, segment, type APIPromise, type RequestOptions } from '../core.js';
import type { PagePromise } from '../pagination.js';
import type { CheckoutSession, CheckoutSessionCreateParams, CheckoutSessionListParams } from '../types.js';

export class CheckoutSessions extends APIResource {
  /** A hosted checkout for one sale; send the buyer to `url` or open it with the checkout library. */
  create(params: CheckoutSessionCreateParams, options?: RequestOptions): APIPromise<CheckoutSession> {
    return this.client.request({ method: 'POST', path: '/v1/checkout/sessions', body: params }, options);
  }

  retrieve(id: string, options?: RequestOptions): APIPromise<CheckoutSession> {
    return this.client.request({ method: 'GET', path: `/v1/checkout/sessions/${segment(id)}` }, options);
  }

  list(params: CheckoutSessionListParams = {}, options?: RequestOptions): PagePromise<CheckoutSession, CheckoutSessionListParams> {
    return this.client.list('/v1/checkout/sessions', params, options);
  }

  /** Closes an open session: the buyer can no longer pay through it. */
  expire(id: string, options?: RequestOptions): APIPromise<CheckoutSession> {
    return this.client.request({ method: 'POST', path: `/v1/checkout/sessions/${segment(id)}/expire` }, options);
  }
}
