import { call, client, type Schemas } from './api/client';

export type SplitRule = Schemas['SplitRule'];
export type Recipient = Schemas['AdminRecipient'];

// At most this many pages of 100 are read for one account's rules or recipients.
const MAX_PAGES = 10;

// The order the server applies rules in: priority, then creation, then id.
export function byPriority(a: SplitRule, b: SplitRule): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export async function loadRules(accountId: string, livemode: boolean): Promise<SplitRule[]> {
  const rules: SplitRule[] = [];
  let startingAfter: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await call(client.GET('/admin/split-rules', { params: { query: { accountId, livemode, limit: 100, startingAfter } } }));
    rules.push(...page.data);
    if (!page.hasMore) break;
    startingAfter = page.data[page.data.length - 1].id;
  }
  return rules.sort(byPriority);
}

export async function loadRecipients(accountId: string, livemode: boolean): Promise<Recipient[]> {
  const out: Recipient[] = [];
  let startingAfter: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await call(client.GET('/admin/accounts/{id}/recipients', { params: { path: { id: accountId }, query: { livemode, limit: 100, startingAfter } } }));
    out.push(...page.data);
    if (!page.hasMore) break;
    startingAfter = page.data[page.data.length - 1].id;
  }
  return out;
}
