import { APIResource, type APIPromise, type RequestOptions } from '../core.js';
import type { Balance as BalanceObject } from '../types.js';

export class Balance extends APIResource {
  /** Pending, available and settled totals (centavos) for the merchant and each recipient. */
  retrieve(options?: RequestOptions): APIPromise<BalanceObject> {
    return this.client.request({ method: 'GET', path: '/v1/balance' }, options);
  }
}
