import { sql } from 'kysely';
import type { Store } from '../store/index.js';

export interface AuditReport {
  ok: boolean;
  checks: Array<{ name: string; violations: number; examples: string[] }>;
}

const SOLD = `('approved', 'partially_refunded', 'refunded')`;

// The money invariants, checked over the whole store with set queries (no per-row loops, so it
// stays usable on millions of receivables). Each check returns the offending ids, at most 20.
// A check that reads a table made by a later migration (`needs`) runs its `without` query on a
// store migrated only before it (a migration's own test audits such a store), or is left out.
const CHECKS: Array<{ name: string; query: string; needs?: string; without?: string }> = [
  {
    // Disputes (issue 27): what a lost dispute debits the payees is its debited_amount; won, 0.
    name: "every sale's receivables sum to its net value minus refunds and lost disputes",
    query: `select p.id as id from payments p
      left join (select payment_id, sum(amount) as total from receivables group by payment_id) r on r.payment_id = p.id
      left join (select payment_id, sum(net_amount) as net from refunds group by payment_id) f on f.payment_id = p.id
      left join (select payment_id, sum(debited_amount) as debited from disputes group by payment_id) d on d.payment_id = p.id
      where p.status in ${SOLD} and (p.net_amount is null or p.net_amount - coalesce(f.net, 0) - coalesce(d.debited, 0) <> coalesce(r.total, 0))`,
    needs: 'disputes',
    without: `select p.id as id from payments p
      left join (select payment_id, sum(amount) as total from receivables group by payment_id) r on r.payment_id = p.id
      left join (select payment_id, sum(net_amount) as net from refunds group by payment_id) f on f.payment_id = p.id
      where p.status in ${SOLD} and (p.net_amount is null or p.net_amount - coalesce(f.net, 0) <> coalesce(r.total, 0))`,
  },
  {
    // Lost card chargebacks are debited their amount, won ones nothing (under review after a
    // loss keeps the debit until won); a Pix MED's refund did the debiting.
    name: "a dispute's receivables sum to minus what it debits now",
    query: `select d.id as id from disputes d
      left join (select dispute_id, sum(amount) as total from receivables where dispute_id is not null group by dispute_id) r on r.dispute_id = d.id
      where coalesce(r.total, 0) <> -d.debited_amount
        or (d.kind = 'card_chargeback' and d.status = 'lost' and d.debited_amount <> d.amount)
        or (d.status in ('won', 'needs_response') and d.debited_amount <> 0)
        or (d.kind = 'pix_med' and d.debited_amount <> 0)`,
    needs: 'disputes',
  },
  {
    name: 'fee + net = amount on every approved sale',
    query: `select id from payments where status in ${SOLD} and (fee_amount is null or fee_amount + net_amount <> amount or fee_amount < 0)`,
  },
  {
    name: 'no receivables for a payment that was never approved',
    query: `select distinct r.payment_id as id from receivables r join payments p on p.id = r.payment_id where p.status not in ${SOLD}`,
  },
  {
    name: "a payment's refunded amount is the sum of its refunds, never above the amount",
    query: `select p.id as id from payments p left join (select payment_id, sum(amount) as total from refunds group by payment_id) f on f.payment_id = p.id
      where p.amount_refunded <> coalesce(f.total, 0) or p.amount_refunded > p.amount`,
  },
  {
    name: 'sale receivables are never negative',
    query: `select id from receivables where source_id = payment_id and amount < 0`,
  },
  {
    name: 'every settled receivable is in exactly one live settlement',
    query: `select r.id as id from receivables r left join settlements s on s.id = r.settlement_id
      where (r.status = 'settled' and (s.id is null or s.status = 'failed')) or (r.status <> 'settled' and r.settlement_id is not null)`,
  },
  {
    name: 'every settlement amount equals the sum of its receivables',
    query: `select s.id as id from settlements s
      left join (select settlement_id, sum(amount) as total, count(*) as n from receivables where settlement_id is not null group by settlement_id) x on x.settlement_id = s.id
      where s.status <> 'failed' and (s.amount <> coalesce(x.total, 0) or s.receivable_count <> coalesce(x.n, 0) or s.amount <= 0)`,
  },
  {
    name: 'a settlement belongs to the same account, mode and payee as its receivables',
    query: `select r.id as id from receivables r join settlements s on s.id = r.settlement_id
      where s.account_id <> r.account_id or s.livemode <> r.livemode or s.payee_type <> r.payee_type or s.payee_id <> r.payee_id`,
  },
];

export async function audit(store: Store): Promise<AuditReport> {
  const checks: AuditReport['checks'] = [];
  const present = new Map<string, boolean>();
  for (const check of CHECKS) {
    let query = check.query;
    if (check.needs) {
      if (!present.has(check.needs)) present.set(check.needs, await sql`select 1 from ${sql.table(check.needs)} where 1 = 0`.execute(store.db).then(() => true, () => false));
      if (!present.get(check.needs)) {
        if (!check.without) continue;
        query = check.without;
      }
    }
    const { rows } = await sql<{ id: string }>`${sql.raw(query)} limit 21`.execute(store.db);
    checks.push({ name: check.name, violations: rows.length, examples: rows.slice(0, 20).map((r) => r.id) });
  }
  return { ok: checks.every((c) => c.violations === 0), checks };
}

export function formatAudit(report: AuditReport): string {
  const lines = report.checks.map((c) => `${c.violations === 0 ? 'ok  ' : 'FAIL'} ${c.name}${c.violations ? ` (${c.violations > 20 ? 'more than 20' : c.violations}: ${c.examples.join(', ')})` : ''}`);
  lines.push(report.ok ? 'audit passed: every money invariant holds' : 'audit FAILED');
  return lines.join('\n');
}
