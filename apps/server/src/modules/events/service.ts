import type { Tx } from '../../store/index.js';
import { newId } from '../../domain/ids.js';

export interface Owner {
  accountId: string;
  livemode: boolean;
}

// Every state change writes its event in the transaction of the change (outbox): an event
// exists if and only if the change committed. `object` is the resource as the API returns it.
export async function recordEvent(tx: Tx, owner: Owner, type: string, object: unknown, nowMs: number = Date.now()): Promise<string> {
  const id = newId('event', nowMs);
  await tx.insertInto('events').values({
    id,
    account_id: owner.accountId,
    livemode: owner.livemode ? 1 : 0,
    type,
    data: JSON.stringify({ object }),
    created_at: new Date(nowMs).toISOString(),
    created_at_ms: nowMs,
  }).execute();
  return id;
}
