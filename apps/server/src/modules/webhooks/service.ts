import type { Selectable } from 'kysely';
import type { Store, Tx } from '../../store/index.js';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from '../../store/schema.js';
import type { RequestContext } from '../../plugins/idempotency.js';
import { ApiError, notFound, validation } from '../../errors.js';
import { newId } from '../../domain/ids.js';
import { generateSecret } from '../../domain/webhook-signature.js';
import { deliveryMove } from '../../domain/states.js';
import { paginate, type ListQuery } from '../../http/pagination.js';
import { TEST_EVENT_TYPE } from '../events/types.js';
import { emitEvents, markDeliveriesCreated, matchesFilter, newDeliveryRow, newEventRow, type Owner } from '../events/service.js';
import { resolvesToPrivate } from './ssrf.js';
import type { CreateWebhookEndpointBody, UpdateWebhookEndpointBody, WebhookDelivery, WebhookEndpoint } from './schemas.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export const MAX_ENDPOINTS_PER_ACCOUNT = 20;
// An old secret keeps signing, next to the new one, this long after a rotation.
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

export function toEndpoint(row: EndpointRow, withSecret = false): WebhookEndpoint {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    events: JSON.parse(row.events) as WebhookEndpoint['events'],
    description: row.description,
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    ...(withSecret ? { secret: row.secret } : {}),
    livemode: row.livemode === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toDelivery(row: Selectable<WebhookDeliveriesTable>): WebhookDelivery {
  return {
    id: row.id,
    object: 'webhook_delivery',
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    status: row.status,
    attempts: row.attempts,
    lastResponseCode: row.last_response_code,
    lastError: row.last_error,
    lastAttemptAt: row.last_attempt_at,
    nextAttemptAt: row.status === 'pending' && row.next_attempt_at_ms != null ? new Date(row.next_attempt_at_ms).toISOString() : null,
    livemode: row.livemode === 1,
    createdAt: row.created_at,
  };
}

// Who may point a webhook at loopback or a private network: nobody in live mode; sandbox
// endpoints only where WEBHOOK_ALLOW_PRIVATE_URLS is on (by default, outside production).
export interface UrlPolicy {
  allowPrivateUrls: boolean;
}

export const mustBePublic = (livemode: boolean, policy: UrlPolicy) => livemode || !policy.allowPrivateUrls;

async function checkUrl(url: string, livemode: boolean, policy: UrlPolicy): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw validation('url must be an absolute http(s) URL.', 'url');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw validation('url must use http or https.', 'url');
  if (parsed.username || parsed.password) throw validation('url must not carry credentials.', 'url');
  if (mustBePublic(livemode, policy) && (await resolvesToPrivate(parsed.hostname))) {
    throw validation(`${livemode ? 'In live mode the' : 'The'} url must reach a public address (not loopback or a private network).`, 'url');
  }
  return parsed.toString();
}

export async function loadEndpoint(db: Store['db'] | Tx, owner: Owner, id: string, param = 'id'): Promise<EndpointRow> {
  const row = await db.selectFrom('webhook_endpoints').selectAll()
    .where('id', '=', id).where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0).executeTakeFirst();
  if (!row) throw notFound('webhook endpoint', param);
  return row;
}

export async function createEndpoint(ctx: RequestContext, body: CreateWebhookEndpointBody, policy: UrlPolicy): Promise<WebhookEndpoint> {
  const url = await checkUrl(body.url, ctx.livemode, policy);
  return ctx.write(async (tx) => {
    const count = await tx.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', ctx.accountId).where('livemode', '=', ctx.livemode ? 1 : 0).executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_ENDPOINTS_PER_ACCOUNT) throw new ApiError('UNPROCESSABLE', `An account can have at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints in each mode.`);
    const nowIso = new Date(ctx.clock.nowMs()).toISOString();
    const row: EndpointRow = {
      id: newId('webhookEndpoint', Date.parse(nowIso)), account_id: ctx.accountId, livemode: ctx.livemode ? 1 : 0, url, events: JSON.stringify([...new Set(body.events)]),
      description: body.description ?? null, enabled: 1, secret: generateSecret(), previous_secret: null, previous_secret_expires_at_ms: null,
      disabled_reason: null, failing_since_ms: null, created_at: nowIso, updated_at: nowIso,
    };
    await tx.insertInto('webhook_endpoints').values(row).execute();
    return toEndpoint(row, true);
  });
}

export async function updateEndpoint(ctx: RequestContext, id: string, body: UpdateWebhookEndpointBody, policy: UrlPolicy): Promise<WebhookEndpoint> {
  const url = body.url !== undefined ? await checkUrl(body.url, ctx.livemode, policy) : undefined;
  return ctx.write(async (tx) => {
    const row = await loadEndpoint(tx, ctx, id);
    const nowIso = new Date(ctx.clock.nowMs()).toISOString();
    const changes: Partial<EndpointRow> = { updated_at: nowIso };
    if (url !== undefined) changes.url = url;
    if (body.events !== undefined) changes.events = JSON.stringify([...new Set(body.events)]);
    if (body.description !== undefined) changes.description = body.description;
    if (body.enabled !== undefined) {
      changes.enabled = body.enabled ? 1 : 0;
      if (body.enabled) Object.assign(changes, { disabled_reason: null, failing_since_ms: null });
      else changes.disabled_reason = row.enabled === 1 ? 'disabled by you' : row.disabled_reason;
    }
    await tx.updateTable('webhook_endpoints').set(changes).where('id', '=', row.id).execute();
    return toEndpoint({ ...row, ...changes });
  });
}

export async function deleteEndpoint(ctx: RequestContext, id: string): Promise<WebhookEndpoint & { deleted: true }> {
  return ctx.write(async (tx) => {
    const row = await loadEndpoint(tx, ctx, id);
    const nowIso = new Date(ctx.clock.nowMs()).toISOString();
    const move = deliveryMove('pending', 'failed');
    await tx.updateTable('webhook_deliveries').set({ status: move.to, last_error: 'endpoint deleted', next_attempt_at_ms: null, updated_at: nowIso })
      .where('endpoint_id', '=', row.id).where('status', '=', move.from).execute();
    await tx.deleteFrom('webhook_endpoints').where('id', '=', row.id).execute();
    return { ...toEndpoint(row), deleted: true as const };
  });
}

export async function rotateSecret(ctx: RequestContext, id: string): Promise<WebhookEndpoint> {
  return ctx.write(async (tx) => {
    const row = await loadEndpoint(tx, ctx, id);
    const nowMs = ctx.clock.nowMs();
    const changes = { secret: generateSecret(), previous_secret: row.secret, previous_secret_expires_at_ms: nowMs + ROTATION_OVERLAP_MS, updated_at: new Date(nowMs).toISOString() };
    await tx.updateTable('webhook_endpoints').set(changes).where('id', '=', row.id).execute();
    return toEndpoint({ ...row, ...changes }, true);
  });
}

// Sends a `webhook.test` event to this endpoint only (whatever its filter).
export async function sendTest(ctx: RequestContext, id: string): Promise<WebhookDelivery> {
  return ctx.write(async (tx) => {
    const endpoint = await loadEndpoint(tx, ctx, id);
    // The dispatcher sends nothing to a disabled endpoint: say so rather than queue a delivery
    // that would only fail.
    if (endpoint.enabled !== 1) throw new ApiError('INVALID_STATE', 'This webhook endpoint is disabled; enable it first.');
    const nowMs = ctx.clock.nowMs();
    const event = newEventRow(ctx, TEST_EVENT_TYPE, { object: 'webhook_test', endpointId: endpoint.id, message: 'This is a test delivery.' }, nowMs);
    await tx.insertInto('events').values(event).execute();
    const delivery = newDeliveryRow(endpoint.id, event, nowMs);
    await tx.insertInto('webhook_deliveries').values(delivery).execute();
    markDeliveriesCreated();
    return toDelivery(delivery as Selectable<WebhookDeliveriesTable>);
  });
}

export async function redeliver(ctx: RequestContext, eventId: string, endpointId: string | undefined): Promise<{ object: 'list'; data: WebhookDelivery[]; hasMore: false }> {
  return ctx.write(async (tx) => {
    const event = await tx.selectFrom('events').select(['id', 'type', 'account_id', 'livemode'])
      .where('id', '=', eventId).where('account_id', '=', ctx.accountId).where('livemode', '=', ctx.livemode ? 1 : 0).executeTakeFirst();
    if (!event) throw notFound('event', 'id');
    let endpoints: EndpointRow[];
    if (endpointId) {
      const one = await loadEndpoint(tx, ctx, endpointId, 'endpointId');
      if (one.enabled !== 1) throw new ApiError('INVALID_STATE', 'This webhook endpoint is disabled; enable it first.');
      endpoints = [one];
    } else {
      endpoints = (await tx.selectFrom('webhook_endpoints').selectAll()
        .where('account_id', '=', ctx.accountId).where('livemode', '=', ctx.livemode ? 1 : 0).where('enabled', '=', 1).execute())
        .filter((e) => matchesFilter(e.events, event.type));
    }
    const nowMs = ctx.clock.nowMs();
    const rows = endpoints.map((e) => newDeliveryRow(e.id, event, nowMs));
    if (rows.length > 0) {
      await tx.insertInto('webhook_deliveries').values(rows).execute();
      markDeliveriesCreated();
    }
    return { object: 'list' as const, data: rows.map((r) => toDelivery(r as Selectable<WebhookDeliveriesTable>)), hasMore: false as const };
  });
}

export async function getEndpoint(store: Store, owner: Owner, id: string): Promise<WebhookEndpoint> {
  return toEndpoint(await loadEndpoint(store.db, owner, id));
}

export async function listEndpoints(store: Store, owner: Owner, q: ListQuery) {
  const qb = store.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0);
  return paginate(qb, q, (r) => toEndpoint(r), qb);
}

export async function listDeliveries(store: Store, owner: Owner, endpointId: string, q: ListQuery & { status?: 'pending' | 'succeeded' | 'failed'; eventId?: string }) {
  await loadEndpoint(store.db, owner, endpointId);
  const scope = store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId);
  let qb = scope;
  if (q.status) qb = qb.where('status', '=', q.status);
  if (q.eventId) qb = qb.where('event_id', '=', q.eventId);
  return paginate(qb, q, toDelivery, scope);
}

export { emitEvents };
