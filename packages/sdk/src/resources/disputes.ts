import { APIResource, segment, type APIPromise, type RequestOptions } from '../core.js';
import type { PagePromise } from '../pagination.js';
import type { Dispute, DisputeListParams } from '../types.js';

/**
 * Card chargebacks and Pix MED returns. Read-only: a dispute is made and moved by its source
 * (the acquirer's notifications, the PSP's returns); evidence is submitted at the acquirer.
 */
export class Disputes extends APIResource {
  retrieve(id: string, options?: RequestOptions): APIPromise<Dispute> {
    return this.client.request({ method: 'GET', path: `/v1/disputes/${segment(id)}` }, options);
  }

  /** Newest first; `for await` walks every page. Filter by `paymentId`, `status`, `kind`. */
  list(params: DisputeListParams = {}, options?: RequestOptions): PagePromise<Dispute, DisputeListParams> {
    return this.client.list('/v1/disputes', params, options);
  }
}
