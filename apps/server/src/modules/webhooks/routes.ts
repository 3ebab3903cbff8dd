import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../store/index.js';
import { IdempotencyHeaders, ListQueryBase, ref, refTo } from '../../http/common.js';
import { getEvent, listEvents } from '../events/service.js';
import { ListDeliveriesQuery, ListEventsQuery } from './schemas.js';
import { CreateWebhookEndpointBody, RedeliverBody, UpdateWebhookEndpointBody } from './schemas.js';
import { createEndpoint, deleteEndpoint, getEndpoint, listDeliveries, listEndpoints, redeliver, rotateSecret, sendTest, updateEndpoint, type UrlPolicy } from './service.js';
import { typed } from '../../http/typed.js';

const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });
const PageQuery = Type.Object({ limit: ListQueryBase.limit, startingAfter: ListQueryBase.startingAfter, endingBefore: ListQueryBase.endingBefore }, { additionalProperties: false });
const tags = ['Webhook endpoints'];

export function webhookRoutes(appInstance: FastifyInstance, store: Store, policy: UrlPolicy): void {
  const app = typed(appInstance);
  app.post('/v1/webhook-endpoints', {
    config: { throws: ['UNPROCESSABLE'] },
    schema: {
      operationId: 'createWebhookEndpoint', tags, summary: 'Create a webhook endpoint',
      description: 'Returns the endpoint with its `whsec_` signing secret (shown here and on rotation only). Deliveries follow Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature` headers.',
      headers: IdempotencyHeaders, body: refTo(CreateWebhookEndpointBody),
      response: { 200: ref('WebhookEndpoint') },
    },
  }, (req) => createEndpoint(req.ctx, req.body, policy));

  app.get('/v1/webhook-endpoints', {
    schema: { operationId: 'listWebhookEndpoints', tags, summary: 'List webhook endpoints', querystring: PageQuery, response: { 200: ref('WebhookEndpointList') } },
  }, (req) => listEndpoints(store, req.ctx, req.query));

  app.get('/v1/webhook-endpoints/:id', {
    schema: { operationId: 'getWebhookEndpoint', tags, summary: 'Fetch a webhook endpoint', params: IdParams, response: { 200: ref('WebhookEndpoint') } },
  }, (req) => getEndpoint(store, req.ctx, req.params.id));

  app.patch('/v1/webhook-endpoints/:id', {
    schema: {
      operationId: 'updateWebhookEndpoint', tags, summary: 'Update a webhook endpoint', description: 'Change the url, the event filter, the description, or enable/disable it.',
      headers: IdempotencyHeaders, params: IdParams, body: refTo(UpdateWebhookEndpointBody),
      response: { 200: ref('WebhookEndpoint') },
    },
  }, (req) => updateEndpoint(req.ctx, req.params.id, req.body, policy));

  app.delete('/v1/webhook-endpoints/:id', {
    schema: {
      operationId: 'deleteWebhookEndpoint', tags, summary: 'Delete a webhook endpoint', description: 'Pending deliveries to it are dropped.',
      headers: IdempotencyHeaders, params: IdParams,
      response: { 200: ref('DeletedWebhookEndpoint') },
    },
  }, async (req) => {
    const deleted = await deleteEndpoint(req.ctx, req.params.id);
    return { id: deleted.id, object: deleted.object, deleted: true, livemode: deleted.livemode };
  });

  app.post('/v1/webhook-endpoints/:id/rotate-secret', {
    schema: {
      operationId: 'rotateWebhookEndpointSecret', tags, summary: 'Rotate the signing secret',
      description: 'Returns the new secret. For 24 hours deliveries carry two signatures (new and old), so you can switch without missing one.',
      headers: IdempotencyHeaders, params: IdParams, response: { 200: ref('WebhookEndpoint') },
    },
  }, (req) => rotateSecret(req.ctx, req.params.id));

  app.post('/v1/webhook-endpoints/:id/test', {
    config: { throws: ['INVALID_STATE'] },
    schema: {
      operationId: 'testWebhookEndpoint', tags, summary: 'Send a test event',
      description: 'Sends a `webhook.test` event to this endpoint (whatever its filter) and returns the delivery.',
      headers: IdempotencyHeaders, params: IdParams, response: { 200: ref('WebhookDelivery') },
    },
  }, (req) => sendTest(req.ctx, req.params.id));

  app.get('/v1/webhook-endpoints/:id/deliveries', {
    schema: {
      operationId: 'listWebhookDeliveries', tags, summary: 'List deliveries to an endpoint',
      description: 'The delivery log: status, attempts, last response code, next attempt.',
      params: IdParams, querystring: ListDeliveriesQuery, response: { 200: ref('WebhookDeliveryList') },
    },
  }, (req) => listDeliveries(store, req.ctx, req.params.id, req.query));

  app.get('/v1/events', {
    schema: {
      operationId: 'listEvents', tags: ['Events'], summary: 'List events',
      description: 'Every state change, newest first; kept 30 days (configurable).',
      querystring: ListEventsQuery, response: { 200: ref('EventList') },
    },
  }, (req) => listEvents(store, req.ctx, req.query));

  app.get('/v1/events/:id', {
    schema: { operationId: 'getEvent', tags: ['Events'], summary: 'Fetch an event', params: IdParams, response: { 200: ref('EventObject') } },
  }, (req) => getEvent(store, req.ctx, req.params.id));

  app.post('/v1/events/:id/redeliver', {
    // The body is optional: a bare POST redelivers to every matching endpoint.
    config: { throws: ['INVALID_STATE'], bodyOptional: true },
    schema: {
      operationId: 'redeliverEvent', tags: ['Events'], summary: 'Send an event again',
      description: 'Creates new deliveries of this event: to one endpoint, or to every enabled endpoint whose filter matches.',
      headers: IdempotencyHeaders, params: IdParams, body: refTo(RedeliverBody),
      response: { 200: ref('WebhookDeliveryList') },
    },
  }, (req) => redeliver(req.ctx, req.params.id, req.body.endpointId));
}
