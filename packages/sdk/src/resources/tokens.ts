import { APIResource, type APIPromise, type RequestOptions } from '../core.js';
import type { CardToken, CardTokenCreateParams } from '../types.js';

// Card tokens are made in the buyer's browser (the hosted checkout, or your page with a
// publishable key), so card data never reaches your server. This method exists for tests and
// for platforms that are PCI compliant themselves.
export class Tokens extends APIResource {
  create(params: CardTokenCreateParams, options?: RequestOptions): APIPromise<CardToken> {
    return this.client.request({ method: 'POST', path: '/v1/tokens', body: params }, options);
  }
}
