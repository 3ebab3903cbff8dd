import { APIResource, segment, type APIPromise, type RequestOptions } from '../core.js';
import type { PagePromise } from '../pagination.js';
import type { Receivable, ReceivableListParams } from '../types.js';

export class Receivables extends APIResource {
  retrieve(id: string, options?: RequestOptions): APIPromise<Receivable> {
    return this.client.request({ method: 'GET', path: `/v1/receivables/${segment(id)}` }, options);
  }

  /** Filters: paymentId, recipientId, payeeType, status, settlementId, availableOn and created ranges. */
  list(params: ReceivableListParams = {}, options?: RequestOptions): PagePromise<Receivable, ReceivableListParams> {
    return this.client.list('/v1/receivables', params, options);
  }
}
