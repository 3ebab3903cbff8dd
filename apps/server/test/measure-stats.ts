// Measures GET /admin/stats on a large store (issue 29): N payments (default 1,000,000) spread
// over 365 days, 50 accounts, both methods and modes, a realistic status mix; migration 0011
// backfills the aggregates from them. Prints the backfill time, the endpoint's median time over
// 20 requests for 30 days and for 365 days, and the same figures computed by a GROUP BY over the
// payments (what the aggregates replace), for the ratio.
//
//   node --import tsx test/measure-stats.ts                  # SQLite, 1M payments
//   MEASURE_DATABASE_URL=postgres://... node --import tsx test/measure-stats.ts
//   MEASURE_PAYMENTS=200000 node --import tsx test/measure-stats.ts
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { Store } from '../src/store/index.js';
import { adminSession, startApp, testDatabase, type TestDb } from './helpers.js';
import { localDate, addDays } from '../src/modules/accounts/settings.js';

const N = Number(process.env.MEASURE_PAYMENTS ?? 1_000_000);
const url = process.env.MEASURE_DATABASE_URL;
if (url) process.env.TEST_DATABASE_URL = url;
const db: TestDb = await testDatabase(url ? 'postgres' : 'sqlite');
const store = Store.open({ url: db.url });
await store.migrate('0009_refund_original_amounts_sign_in_failures');
const today = localDate(Date.now());
const t0 = performance.now();
const statusOf = `case when x % 20 < 14 then 'approved' when x % 20 < 16 then 'declined' when x % 20 = 16 then 'refunded' when x % 20 = 17 then 'expired' when x % 20 = 18 then 'failed' else 'pending' end`;
const failureOf = `case when x % 20 in (14, 15) then (case when x % 3 = 0 then 'insufficient_funds' else 'card_declined' end) when x % 20 = 18 then 'provider_unavailable' else null end`;
const cols = `id, account_id, livemode, status, amount, currency, method, amount_refunded, provider_attempts, failure_code, created_at, updated_at`;
const vals = (created: string) => `'pay_' || x, 'acct_' || (x % 50), (x % 10 = 0)::int, ${statusOf}, 100 + (x * 7919) % 100000, 'BRL',
  case when x % 3 = 0 then 'pix' else 'credit_card' end, case when x % 20 = 16 then 100 + (x * 7919) % 100000 else 0 end, 1, ${failureOf}, ${created}, ${created}`;
if (store.engine === 'postgres') {
  const created = `to_char(timestamp '${today} 12:00' - (x % 365) * interval '1 day' - (x % 86400) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  await sql.raw(`insert into payments (${cols}) select ${vals(created)} from generate_series(1::bigint, ${N}) as x`).execute(store.db);
} else {
  const created = `strftime('%Y-%m-%dT%H:%M:%fZ', '${today} 12:00', '-' || (x % 365) || ' days', '-' || (x % 86400) || ' seconds')`;
  await store.write((tx) => sql.raw(`with recursive s(x) as (select 1 union all select x + 1 from s where x < ${N})
    insert into payments (${cols}) select ${vals(created).replace('(x % 10 = 0)::int', '(x % 10 = 0)')} from s`).execute(tx));
}
const t1 = performance.now();
await store.migrate();
const t2 = performance.now();
if (store.engine === 'postgres') await sql`analyze`.execute(store.db);
await store.close();
console.log(`${store.engine}: ${N.toLocaleString('en')} payments inserted in ${((t1 - t0) / 1000).toFixed(1)} s; migration 0011 backfilled the aggregates in ${((t2 - t1) / 1000).toFixed(1)} s`);

const app = await startApp(store.engine === 'postgres' ? 'postgres' : 'sqlite', {}, { db, worker: false });
const admin = await adminSession(app);
const median = async (run: () => Promise<unknown>, times = 20) => {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const s = performance.now();
    await run();
    ms.push(performance.now() - s);
  }
  return ms.sort((a, b) => a - b)[Math.floor(times / 2)];
};
for (const days of [30, 365]) {
  const from = addDays(today, -(days - 1));
  const get = async (query: string) => {
    const res = await app.app.inject({ method: 'GET', url: `/admin/stats?from=${from}&to=${today}${query}`, headers: { cookie: admin.cookie } });
    if (res.statusCode !== 200) throw new Error(res.body);
    return res.json();
  };
  const body = await get('');
  const endpoint = await median(() => get(''));
  const oneAccount = await median(() => get('&accountId=acct_7&livemode=false'));
  // What the aggregates replace: the same sums read from the payments themselves.
  const fromIso = `${addDays(from, 0)}T03:00:00.000Z`;
  const scan = await median(() => app.store.db.selectFrom('payments')
    .select(['method', 'status', 'failure_code', (eb) => eb.fn.countAll().as('n'), (eb) => eb.fn.sum('amount').as('amount'), sql`substr(created_at, 1, 10)`.as('day')])
    .where('created_at', '>=', fromIso).groupBy(['method', 'status', 'failure_code', sql`substr(created_at, 1, 10)`]).execute(), 3);
  console.log(`${days} days (${body.payments.count.toLocaleString('en')} payments): GET /admin/stats median ${endpoint.toFixed(1)} ms (one account and mode: ${oneAccount.toFixed(1)} ms); a GROUP BY over the payments: ${scan.toFixed(0)} ms`);
}
await app.teardown();
