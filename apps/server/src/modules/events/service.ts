import type { Insertable, Selectable } from 'kysely';
import type { Store, Tx } from '../../store/index.js';
import type { EventsTable, WebhookDeliveriesTable } from '../../store/schema.js';
import { ID_PREFIXES, newId } from '../../domain/ids.js';
import { notFound } from '../../errors.js';
import { paginate, type ListQuery } from '../../http/pagination.js';
import { defer, deferWork, type DeferredWork } from '../../store/index.js';
import type { EventType, TEST_EVENT_TYPE } from './types.js';

export interface Owner {
  accountId: string;
  livemode: boolean;
}

// New deliveries wake the in-process dispatcher after the commit that made them (it could not
// see them before), instead of at its next poll. The flag is raised inside the transaction and
// taken by the store's commit hook (see app.ts); polling stays the fallback.
let deliveriesCreated = false;
export function markDeliveriesCreated(): void {
  deliveriesCreated = true;
}
export function takeDeliveriesCreated(): boolean {
  const was = deliveriesCreated;
  deliveriesCreated = false;
  return was;
}

export function newEventRow(owner: Owner, type: EventType | typeof TEST_EVENT_TYPE, object: unknown, nowMs: number): Insertable<EventsTable> {
  return {
    id: newId('event', nowMs),
    account_id: owner.accountId,
    livemode: owner.livemode ? 1 : 0,
    type,
    data: JSON.stringify({ object }),
    created_at: new Date(nowMs).toISOString(),
    created_at_ms: nowMs,
  };
}

export function matchesFilter(filterJson: string, type: string): boolean {
  const filter = JSON.parse(filterJson) as string[];
  return filter.includes('*') || filter.includes(type);
}

export function newDeliveryRow(endpointId: string, event: { id: string; account_id: string; livemode: number }, nowMs: number): Insertable<WebhookDeliveriesTable> {
  const nowIso = new Date(nowMs).toISOString();
  return {
    id: newId('delivery', nowMs), endpoint_id: endpointId, event_id: event.id, account_id: event.account_id, livemode: event.livemode,
    status: 'pending', attempts: 0, next_attempt_at_ms: nowMs, last_response_code: null, last_error: null, last_attempt_at: null,
    locked_until_ms: null, locked_by: null, created_at: nowIso, updated_at: nowIso,
  };
}

// Every state change writes its events here, in the transaction of the change (outbox): an
// event exists if and only if the change committed, and so does one delivery row per enabled
// webhook endpoint of the account and mode whose filter matches.
export async function emitEvents(tx: Tx, owner: Owner, events: Array<{ type: EventType; object: unknown }>, nowMs: number): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((e) => newEventRow(owner, e.type, e.object, nowMs));
  await defer(tx, 'events', rows);
  // One endpoint lookup for the whole group-committed batch, at its end, in its transaction.
  await deferWork(tx, fanOut, rows);
  return rows.map((r) => r.id);
}

type EventRow = Insertable<EventsTable>;

// The webhook fan-out of events: one delivery per enabled endpoint of the event's account and
// mode whose filter matches. Run once per batch over all its events (or at once, outside one).
const fanOut: DeferredWork<EventRow> = {
  key: 'events.fanout',
  tables: ['webhook_deliveries'],
  reads: ['webhook_endpoints'],
  async run(tx, events, read) {
    const accountIds = [...new Set(events.map((e) => e.account_id))];
    const endpoints = await read.selectFrom('webhook_endpoints').select(['id', 'account_id', 'livemode', 'events'])
      .where('enabled', '=', 1).where('account_id', 'in', accountIds).execute();
    if (endpoints.length === 0) return;
    // A delivery is due when its event happened (the writer's clock, carried by the event row).
    const deliveries = events.flatMap((event) => endpoints
      .filter((e) => e.account_id === event.account_id && e.livemode === event.livemode && matchesFilter(e.events, event.type))
      .map((e) => newDeliveryRow(e.id, event as { id: string; account_id: string; livemode: number }, event.created_at_ms)));
    if (deliveries.length === 0) return;
    await defer(tx, 'webhook_deliveries', deliveries);
    markDeliveriesCreated();
  },
  // PostgreSQL, in the batch's one script: the same deliveries made by an INSERT ... SELECT that
  // joins the batch's events with the endpoints, so the create's batch is one round trip (the
  // endpoints' read before it was a second). A delivery's id is derived from its event's and
  // its endpoint's (the event's time, then 16 hex digits of their md5): unique per pair, and
  // as time-ordered as an id made in JavaScript. Whether it made any is not known here, so the
  // in-process dispatcher is woken after the commit anyway (one claim query; polling is the
  // fallback either way).
  bundled(events, literal) {
    const values = events.map((e) => `(${[e.id, e.account_id, e.livemode, e.type, e.created_at_ms, e.created_at].map(literal).join(', ')})`);
    markDeliveriesCreated();
    return 'insert into "webhook_deliveries" ("id", "endpoint_id", "event_id", "account_id", "livemode", "status", "attempts", "next_attempt_at_ms", "created_at", "updated_at")'
      + ` select ${literal(ID_PREFIXES.delivery)} || left(right(ev.id, 26), 10) || left(md5(ev.id || ep.id), 16), ep.id, ev.id, ev.account_id, ev.livemode, 'pending', 0, ev.at_ms, ev.at, ev.at`
      + ` from (values ${values.join(', ')}) as ev (id, account_id, livemode, type, at_ms, at)`
      + ' join "webhook_endpoints" ep on ep.account_id = ev.account_id and ep.livemode = ev.livemode and ep.enabled = 1'
      + " where ep.events::jsonb ? '*' or ep.events::jsonb ? ev.type";
  },
};

export async function recordEvent(tx: Tx, owner: Owner, type: EventType, object: unknown, nowMs: number): Promise<string> {
  const [id] = await emitEvents(tx, owner, [{ type, object }], nowMs);
  return id;
}

export interface EventResource {
  id: string;
  object: 'event';
  type: string;
  createdAt: string;
  livemode: boolean;
  data: { object: unknown };
}

export function toEvent(row: Selectable<EventsTable>): EventResource {
  return { id: row.id, object: 'event', type: row.type, createdAt: row.created_at, livemode: row.livemode === 1, data: JSON.parse(row.data) as EventResource['data'] };
}

// The exact bytes a webhook carries: built from the stored data without re-parsing it.
export function eventPayload(row: Pick<Selectable<EventsTable>, 'id' | 'type' | 'created_at' | 'livemode' | 'data'>): string {
  return `{"id":${JSON.stringify(row.id)},"object":"event","type":${JSON.stringify(row.type)},"createdAt":${JSON.stringify(row.created_at)},"livemode":${row.livemode === 1},"data":${row.data}}`;
}

export async function getEvent(store: Store, owner: Owner, id: string): Promise<EventResource> {
  const row = await store.db.selectFrom('events').selectAll()
    .where('id', '=', id).where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0).executeTakeFirst();
  if (!row) throw notFound('event', 'id');
  return toEvent(row);
}

export async function listEvents(store: Store, owner: Owner, q: ListQuery & { type?: EventType | typeof TEST_EVENT_TYPE }) {
  const scope = store.db.selectFrom('events').selectAll().where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0);
  let qb = scope;
  if (q.type) qb = qb.where('type', '=', q.type);
  return paginate(qb, q, toEvent, scope);
}
