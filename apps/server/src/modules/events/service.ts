import type { Insertable } from 'kysely';
import type { Tx } from '../../store/index.js';
import type { EventsTable } from '../../store/schema.js';
import { newId } from '../../domain/ids.js';

export interface Owner {
  accountId: string;
  livemode: boolean;
}

// Every state change writes its event in the transaction of the change (outbox): an event
// exists if and only if the change committed. `object` is the resource as the API returns it.
export async function recordEvent(tx: Tx, owner: Owner, type: string, object: unknown, nowMs: number = Date.now()): Promise<string> {
  const row = newEventRow(owner, type, object, nowMs);
  await tx.insertInto('events').values(row).execute();
  return row.id;
}

// For several events of one change in a single multi-row INSERT.
export function newEventRow(owner: Owner, type: string, object: unknown, nowMs: number = Date.now()): Insertable<EventsTable> {
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
