import { APIResource, segment, type APIPromise, type RequestOptions } from '../core.js';
import type { PagePromise } from '../pagination.js';
import type { Recipient, RecipientCreateParams, RecipientListParams, RecipientUpdateParams } from '../types.js';

export class Recipients extends APIResource {
  /** Registers a payee (CNPJ and bank account) that split rules can name. */
  create(params: RecipientCreateParams, options?: RequestOptions): APIPromise<Recipient> {
    return this.client.request({ method: 'POST', path: '/v1/recipients', body: params }, options);
  }

  retrieve(id: string, options?: RequestOptions): APIPromise<Recipient> {
    return this.client.request({ method: 'GET', path: `/v1/recipients/${segment(id)}` }, options);
  }

  update(id: string, params: RecipientUpdateParams, options?: RequestOptions): APIPromise<Recipient> {
    return this.client.request({ method: 'PATCH', path: `/v1/recipients/${segment(id)}`, body: params }, options);
  }

  list(params: RecipientListParams = {}, options?: RequestOptions): PagePromise<Recipient, RecipientListParams> {
    return this.client.list('/v1/recipients', params, options);
  }
}
