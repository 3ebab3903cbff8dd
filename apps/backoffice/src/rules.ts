import { allPages, call, client, type Schemas } from './api/client';

export type SplitRule = Schemas['SplitRule'];
export type Recipient = Schemas['AdminRecipient'];

// The order the server applies rules in: priority, then creation, then id.
export function byPriority(a: SplitRule, b: SplitRule): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export async function loadRules(accountId: string, livemode: boolean): Promise<SplitRule[]> {
  const rules = await allPages((startingAfter) => call(client.GET('/admin/split-rules', { params: { query: { accountId, livemode, limit: 100, startingAfter } } })));
  return rules.sort(byPriority);
}

export function loadRecipients(accountId: string, livemode: boolean): Promise<Recipient[]> {
  return allPages((startingAfter) => call(client.GET('/admin/accounts/{id}/recipients', { params: { path: { id: accountId }, query: { livemode, limit: 100, startingAfter } } })));
}
