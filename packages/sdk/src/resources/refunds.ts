import { APIResource, segment, type APIPromise, type RequestOptions } from '../core.js';
import type { PagePromise } from '../pagination.js';
import type { Refund, RefundCreateParams, RefundListParams } from '../types.js';

export class Refunds extends APIResource {
  /** Refunds an approved payment: all that is left by default, or `amount` centavos. */
  create(params: RefundCreateParams, options?: RequestOptions): APIPromise<Refund> {
    return this.client.request({ method: 'POST', path: '/v1/refunds', body: params }, options);
  }

  retrieve(id: string, options?: RequestOptions): APIPromise<Refund> {
    return this.client.request({ method: 'GET', path: `/v1/refunds/${segment(id)}` }, options);
  }

  list(params: RefundListParams = {}, options?: RequestOptions): PagePromise<Refund, RefundListParams> {
    return this.client.list('/v1/refunds', params, options);
  }
}
