import { APIResource, segment, type APIPromise, type RequestOptions } from '../core.js';
import type { PagePromise } from '../pagination.js';
import type {
  DeletedWebhookEndpoint, WebhookDelivery, WebhookDeliveryListParams, WebhookEndpoint, WebhookEndpointCreateParams,
  WebhookEndpointListParams, WebhookEndpointUpdateParams, WebhookEndpointWithSecret,
} from '../types.js';

export class WebhookEndpoints extends APIResource {
  /** The answer carries the `whsec_` secret: store it now, it is not shown again. */
  create(params: WebhookEndpointCreateParams, options?: RequestOptions): APIPromise<WebhookEndpointWithSecret> {
    return this.client.request({ method: 'POST', path: '/v1/webhook-endpoints', body: params }, options);
  }

  retrieve(id: string, options?: RequestOptions): APIPromise<WebhookEndpoint> {
    return this.client.request({ method: 'GET', path: `/v1/webhook-endpoints/${segment(id)}` }, options);
  }

  update(id: string, params: WebhookEndpointUpdateParams, options?: RequestOptions): APIPromise<WebhookEndpoint> {
    return this.client.request({ method: 'PATCH', path: `/v1/webhook-endpoints/${segment(id)}`, body: params }, options);
  }

  list(params: WebhookEndpointListParams = {}, options?: RequestOptions): PagePromise<WebhookEndpoint, WebhookEndpointListParams> {
    return this.client.list('/v1/webhook-endpoints', params, options);
  }

  del(id: string, options?: RequestOptions): APIPromise<DeletedWebhookEndpoint> {
    return this.client.request({ method: 'DELETE', path: `/v1/webhook-endpoints/${segment(id)}` }, options);
  }

  /** A new secret; for 24 h deliveries are signed with both, so receivers can switch without missing one. */
  rotateSecret(id: string, options?: RequestOptions): APIPromise<WebhookEndpointWithSecret> {
    return this.client.request({ method: 'POST', path: `/v1/webhook-endpoints/${segment(id)}/rotate-secret` }, options);
  }

  /** Sends a `webhook.test` event to this endpoint and returns the delivery. */
  test(id: string, options?: RequestOptions): APIPromise<WebhookDelivery> {
    return this.client.request({ method: 'POST', path: `/v1/webhook-endpoints/${segment(id)}/test` }, options);
  }

  listDeliveries(id: string, params: WebhookDeliveryListParams = {}, options?: RequestOptions): PagePromise<WebhookDelivery, WebhookDeliveryListParams> {
    return this.client.list(`/v1/webhook-endpoints/${segment(id)}/deliveries`, params, options);
  }
}
