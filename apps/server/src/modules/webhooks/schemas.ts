import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, stringEnum, constant, patterned, always, enumVarnames, freeForm, int32, int64, refTo } from '../../http/common.js';
import { EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES, TEST_EVENT_TYPE } from '../events/types.js';
import { WEBHOOK_DELIVERY_STATUSES } from '../../domain/states.js';

const webhookUrl = (description: string) => patterned('^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$', 'must be an absolute http(s) URL', { minLength: 1, maxLength: 2048, description });

// Only types the service emits (an endpoint subscribed to `payment.aproved` would wait forever).
// What an endpoint subscribes to: an event type the service sends, or `*` for all of them. A
// string with a pattern, not an enum: `*` is no identifier, and a generator that reads no
// `x-enum-varnames` (openapi-generator-plus) made an empty Java enum constant of it (issue 28).
const escapeRegExp = (v: string) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
export const WebhookEventFilter = Type.Unsafe<(typeof SUBSCRIBABLE_EVENT_TYPES)[number]>(patterned(
  `^(?:${SUBSCRIBABLE_EVENT_TYPES.map(escapeRegExp).join('|')})$`,
  `must be an event type the service sends (${EVENT_TYPES.join(', ')}), or "*" for all of them`,
  { $id: 'WebhookEventFilter', description: `An event type the service sends, or \`*\` for all of them: ${SUBSCRIBABLE_EVENT_TYPES.map((v) => `\`${v}\``).join(', ')}.`, examples: ['payment.approved'] },
));
const EventTypes = Type.Array(refTo(WebhookEventFilter), {
  minItems: 1, maxItems: 100, description: 'Event types to receive, e.g. `["payment.approved", "refund.created"]`, or `["*"]` for all.',
});

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: webhookUrl('http(s) URL, without credentials. It must reach a public address (not loopback, a private network, link-local or cloud metadata, ...): always in live mode, and in the sandbox unless the instance allows private URLs (`WEBHOOK_ALLOW_PRIVATE_URLS`: off in production, `NODE_ENV=production`; on by default elsewhere, for local development).'),
    events: EventTypes,
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { $id: 'CreateWebhookEndpointRequest', additionalProperties: false, examples: [{ url: 'https://example.com/webhooks', events: ['payment.approved', 'payment.declined'] }] },
);
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(webhookUrl('http(s) URL, as on create.')),
    events: Type.Optional(EventTypes),
    enabled: Type.Optional(Type.Boolean({ description: 'Re-enabling clears the failure record.' })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  },
  { $id: 'UpdateWebhookEndpointRequest', additionalProperties: false, minProperties: 1, examples: [{ events: ['*'] }, { enabled: true }] },
);
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>;

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String({ description: 'Prefix `whe_`.' }),
    object: constant('webhook_endpoint'),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Type.Union([Type.String(), Type.Null()]),
    enabled: Type.Boolean(),
    disabledReason: Type.Union([Type.String(), Type.Null()], { description: 'Why we disabled it (410 Gone, or failing for 5 days).' }),
    secret: Type.Optional(Type.String({ description: 'The `whsec_` signing secret: only in the responses of create and rotate-secret.' })),
    livemode: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookEndpoint', additionalProperties: false, description: 'A URL we send signed events to.' },
);
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

export const DeletedWebhookEndpoint = Type.Object(
  { id: Type.String(), object: constant('webhook_endpoint'), deleted: always(true), livemode: Type.Boolean() },
  { $id: 'DeletedWebhookEndpoint', additionalProperties: false, description: 'The endpoint was deleted.' },
);
export const WebhookEndpointList = listOf('WebhookEndpoint', 'WebhookEndpointList');

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ description: 'Prefix `whd_`.' }),
    object: constant('webhook_delivery'),
    endpointId: Type.String(),
    eventId: Type.String(),
    status: stringEnum(WEBHOOK_DELIVERY_STATUSES),
    attempts: int64(),
    lastResponseCode: Type.Union([int32({ minimum: 100, maximum: 599 }), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    lastAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    livemode: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookDelivery', additionalProperties: false, description: 'One event on its way to one endpoint, with its attempts.' },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;
export const WebhookDeliveryList = listOf('WebhookDelivery', 'WebhookDeliveryList');

export const ListDeliveriesQuery = Type.Object(
  { limit: ListQueryBase.limit, startingAfter: ListQueryBase.startingAfter, endingBefore: ListQueryBase.endingBefore, status: Type.Optional(stringEnum(WEBHOOK_DELIVERY_STATUSES)), eventId: Type.Optional(Type.String({ maxLength: 64 })) },
  { additionalProperties: false },
);

export const EventData = Type.Object(
  { object: freeForm('The resource as the API returned it at the time (a Payment, Refund, Recipient, Receivable, Settlement, ...: see its `object`).') },
  { $id: 'EventData', additionalProperties: false, description: 'What the event is about.' },
);

export const Event = Type.Object(
  {
    id: Type.String({ description: 'Prefix `evt_`; also the `webhook-id` of its deliveries.' }),
    object: constant('event'),
    type: Type.String({ examples: ['payment.approved'] }),
    createdAt: Type.String({ format: 'date-time' }),
    livemode: Type.Boolean(),
    data: refTo(EventData),
  },
  // Not `Event`: generated TypeScript would shadow the DOM's global Event with it.
  { $id: 'EventObject', additionalProperties: false, description: 'Something that happened: a state change of a payment, refund, recipient, receivable or settlement.' },
);
export const EventList = listOf('EventObject', 'EventList');

export const ListEventsQuery = Type.Object(
  { ...ListQueryBase, type: Type.Optional(stringEnum([...EVENT_TYPES, TEST_EVENT_TYPE], { description: 'Exact event type.', 'x-enum-varnames': enumVarnames([...EVENT_TYPES, TEST_EVENT_TYPE]) })) },
  { additionalProperties: false },
);

export const RedeliverBody = Type.Object(
  { endpointId: Type.Optional(Type.String({ maxLength: 64, description: 'Only to this endpoint (even if its filter would not match); default: every enabled endpoint whose filter matches.' })) },
  { $id: 'RedeliverRequest', additionalProperties: false },
);

export const webhookSchemas = [WebhookEventFilter, CreateWebhookEndpointBody, UpdateWebhookEndpointBody, WebhookEndpoint, DeletedWebhookEndpoint, WebhookEndpointList, WebhookDelivery, WebhookDeliveryList, EventData, Event, EventList, RedeliverBody];
