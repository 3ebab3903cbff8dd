import { sql } from 'kysely';
import type { Store, Tx } from '../../../store/index.js';
import { ApiError } from '../../../errors.js';
import { addDays, localDate } from '../../accounts/settings.js';
import { SETTLEMENT_STATUSES } from '../../../domain/states.js';
import { MAX_FAILING_ENDPOINTS, MAX_STATS_DAYS, type AdminStats, type AdminStatsQuery } from './schemas.js';
import { accountNames } from '../shared/names.js';

// The home's figures come from stats_daily (folded) plus stats_deltas (not folded yet): both
// hold +/- counts and sums per day, account, mode and method/status/reason, written by triggers
// in the transaction of each change (migrations 0011, 0020: on PostgreSQL one delta row per group
// and statement, appended; on SQLite, whose one writer has no one to queue behind a hot row, one
// row per group, added to in place). A read is one GROUP BY over at most days × accounts × a few
// dozen rows, whatever the number of payments.

// Deltas folded per transaction: bounded so the fold never holds the writer for long. Measured
// on the bench (SQLite, 2 cores): 50,000 deltas held the one writer for ~360 ms once a minute,
// which every create in that window waited behind (the open-loop p99 of a whole 10 s window
// became the stall); folding costs ~7 µs a delta, so 2,000 hold it for ~15 ms.
export const STATS_FOLD_BATCH = 2_000;
// stats_daily's account_id for the sum of every account.
export const ALL_ACCOUNTS = '*';

interface Row { kind: string; day: string; method: string; status: string; reason: string; count: number; amount: number; amount2: number }

const APPROVED = new Set(['approved', 'partially_refunded', 'refunded']);
const WITH_OUTCOME = new Set([...APPROVED, 'declined', 'failed']);

export function statsPeriod(q: AdminStatsQuery, nowMs: number): { from: string; to: string } {
  const to = q.to ?? localDate(nowMs);
  const from = q.from ?? addDays(to, -29);
  if (from > to) throw new ApiError('VALIDATION_ERROR', 'from must be on or before to.', { param: 'from' });
  if (addDays(from, MAX_STATS_DAYS - 1) < to) throw new ApiError('VALIDATION_ERROR', `The period may span at most ${MAX_STATS_DAYS} days.`, { param: 'from' });
  return { from, to };
}

export async function adminStats(store: Store, q: AdminStatsQuery, nowMs: number): Promise<AdminStats> {
  const { from, to } = statsPeriod(q, nowMs);
  const where = (allAccounts: string | null) => sql.join([
    ...(q.accountId !== undefined ? [sql`account_id = ${q.accountId}`] : allAccounts === null ? [] : [sql`account_id = ${allAccounts}`]),
    sql`day >= ${from}`, sql`day <= ${to}`,
    ...(q.livemode !== undefined ? [sql`livemode = ${q.livemode ? 1 : 0}`] : []),
  ], sql` and `);
  const cols = sql`kind, day, method, status, reason, count, amount, amount2`;
  // Folded rows: one account's, or every account's total ('*'); deltas: not folded yet, per account.
  const { rows } = await sql<Row>`
    select kind, day, method, status, reason, sum(count) as count, sum(amount) as amount, sum(amount2) as amount2
    from (select ${cols} from stats_daily where ${where(ALL_ACCOUNTS)} union all select ${cols} from stats_deltas where ${where(null)}) s
    group by kind, day, method, status, reason
    order by kind, day, method, status, reason`.execute(store.db);
  const n = (v: unknown) => Number(v ?? 0);

  const days = new Map<string, AdminStats['payments']['days'][number]>();
  const byStatus = new Map<string, { count: number; amount: number }>();
  const declines = new Map<string, AdminStats['payments']['declines'][number]>();
  const refunds = { succeeded: { count: 0, amount: 0 }, pending: { count: 0, amount: 0 }, failed: { count: 0, amount: 0 } };
  const settlements = Object.fromEntries(SETTLEMENT_STATUSES.map((s) => [s, { count: 0, amount: 0 }])) as AdminStats['settlements'];
  const deliveries = { succeeded: 0, failed: 0, pending: 0 };
  let amountRefundedOfPeriod = 0;
  for (const r of rows) {
    const count = n(r.count);
    const amount = n(r.amount);
    if (count === 0 && amount === 0) continue;
    if (r.kind === 'payment') {
      const key = `${r.day}|${r.method}`;
      const d = days.get(key) ?? { date: r.day, method: r.method as 'pix' | 'credit_card', count: 0, approvedCount: 0, volume: 0 };
      d.count += count;
      if (APPROVED.has(r.status)) { d.approvedCount += count; d.volume += amount; }
      days.set(key, d);
      const s = byStatus.get(r.status) ?? { count: 0, amount: 0 };
      s.count += count; s.amount += amount;
      byStatus.set(r.status, s);
      amountRefundedOfPeriod += n(r.amount2);
      if (r.status === 'declined' || r.status === 'failed') {
        const dk = `${r.status}|${r.reason}`;
        const x = declines.get(dk) ?? { reason: r.reason || 'unknown', status: r.status, count: 0, amount: 0 };
        x.count += count; x.amount += amount;
        declines.set(dk, x);
      }
    } else if (r.kind === 'refund') {
      const bucket = refunds[r.status as keyof typeof refunds];
      if (bucket) { bucket.count += count; bucket.amount += amount; }
    } else if (r.kind === 'settlement') {
      const bucket = settlements[r.status as keyof typeof settlements];
      if (bucket) { bucket.count += count; bucket.amount += amount; }
    } else if (r.kind === 'webhook_delivery') {
      if (r.status in deliveries) deliveries[r.status as keyof typeof deliveries] += count;
    }
  }
  const statusList = [...byStatus].map(([status, v]) => ({ status: status as AdminStats['payments']['byStatus'][number]['status'], ...v }));
  const total = (pick: (s: string) => boolean) => statusList.filter((s) => pick(s.status)).reduce((a, s) => a + s.count, 0);
  const approvedCount = total((s) => APPROVED.has(s));
  const withOutcome = total((s) => WITH_OUTCOME.has(s));
  const failing = await failingEndpoints(store, q);
  return {
    object: 'admin_stats', from, to, timeZone: 'America/Sao_Paulo',
    accountId: q.accountId ?? null, livemode: false, mode: q.livemode === undefined ? 'both' : q.livemode ? 'live' : 'test',
    payments: {
      days: [...days.values()],
      byStatus: statusList,
      count: total(() => true),
      approvedCount,
      volume: statusList.filter((s) => APPROVED.has(s.status)).reduce((a, s) => a + s.amount, 0),
      approvalRate: withOutcome === 0 ? null : approvedCount / withOutcome,
      declines: [...declines.values()].sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
    },
    refunds: { ...refunds, amountRefundedOfPeriod },
    disputes: { count: 0, amount: 0, tracked: false },
    settlements,
    webhooks: {
      ...deliveries,
      successRate: deliveries.succeeded + deliveries.failed === 0 ? null : deliveries.succeeded / (deliveries.succeeded + deliveries.failed),
      ...failing,
    },
  };
}

// Endpoints failing now: a handful of rows of a small table (endpoints, not deliveries).
async function failingEndpoints(store: Store, q: AdminStatsQuery) {
  let qb = store.db.selectFrom('webhook_endpoints')
    .where((eb) => eb.or([eb('failing_since_ms', 'is not', null), eb.and([eb('enabled', '=', 0), eb('disabled_reason', 'is not', null)])]));
  if (q.accountId !== undefined) qb = qb.where('account_id', '=', q.accountId);
  if (q.livemode !== undefined) qb = qb.where('livemode', '=', q.livemode ? 1 : 0);
  const [{ total }] = await qb.select((eb) => eb.fn.countAll<number>().as('total')).execute();
  const rows = await qb.select(['id', 'account_id', 'livemode', 'url', 'enabled', 'failing_since_ms', 'disabled_reason'])
    .orderBy('failing_since_ms', 'asc').orderBy('id', 'asc').limit(MAX_FAILING_ENDPOINTS).execute();
  const names = await accountNames(store.db, rows.map((r) => r.account_id));
  return {
    failingEndpointCount: Number(total),
    failingEndpoints: rows.map((r) => ({
      id: r.id, accountId: r.account_id, accountName: names.get(r.account_id) ?? r.account_id, livemode: r.livemode === 1, url: r.url, enabled: r.enabled === 1,
      failingSince: r.failing_since_ms === null ? null : new Date(Number(r.failing_since_ms)).toISOString(),
      disabledReason: r.disabled_reason,
    })),
  };
}

// Folds up to `limit` (STATS_FOLD_BATCH) deltas into stats_daily, in one transaction: the deltas it adds
// are the ones it deletes (PostgreSQL: one statement, DELETE ... RETURNING; SQLite has one
// writer, so nothing commits between its two statements). Returns how many it folded.
export async function foldStatsDeltas(tx: Tx, engine: Store['engine'], limit: number = STATS_FOLD_BATCH): Promise<number> {
  const key = sql`kind, day, account_id, livemode, method, status, reason`;
  const allKey = sql`kind, day, ${sql.lit(ALL_ACCOUNTS)}, livemode, method, status, reason`;
  const allGroup = sql`kind, day, livemode, method, status, reason`;
  const upsert = sql`on conflict (kind, day, account_id, livemode, method, status, reason) do update set
    count = stats_daily.count + excluded.count, amount = stats_daily.amount + excluded.amount, amount2 = stats_daily.amount2 + excluded.amount2`;
  if (engine === 'postgres') {
    const { rows } = await sql<{ folded: number }>`
      with moved as (delete from stats_deltas where seq in (select seq from stats_deltas order by seq limit ${limit}) returning *),
      added as (
        insert into stats_daily (${key}, count, amount, amount2)
        select ${key}, sum(count), sum(amount), sum(amount2) from moved group by ${key} order by ${key}
        ${upsert} returning 1),
      added_all as (
        insert into stats_daily (${key}, count, amount, amount2)
        select ${allKey}, sum(count), sum(amount), sum(amount2) from moved group by ${allGroup} order by ${allGroup}
        ${upsert} returning 1)
      select (select count(*) from moved) as folded`.execute(tx);
    return Number(rows[0]?.folded ?? 0);
  }
  const nth = await tx.selectFrom('stats_deltas').select('seq').orderBy('seq').limit(1).offset(limit - 1).executeTakeFirst();
  const last = nth?.seq ?? (await tx.selectFrom('stats_deltas').select((eb) => eb.fn.max('seq').as('m')).executeTakeFirst())?.m;
  if (last === undefined || last === null) return 0;
  await sql`insert into stats_daily (${key}, count, amount, amount2)
    select ${key}, sum(count), sum(amount), sum(amount2) from stats_deltas where seq <= ${last} group by ${key}
    ${upsert}`.execute(tx);
  await sql`insert into stats_daily (${key}, count, amount, amount2)
    select ${allKey}, sum(count), sum(amount), sum(amount2) from stats_deltas where seq <= ${last} group by ${allGroup}
    ${upsert}`.execute(tx);
  const r = await tx.deleteFrom('stats_deltas').where('seq', '<=', Number(last)).executeTakeFirst();
  return Number(r.numDeletedRows);
}
