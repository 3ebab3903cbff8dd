import type { Clock } from '../clock.js';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import { sameSecret } from '../domain/secrets.js';
import { bearerToken } from './auth.js';
import type { Store } from '../store/index.js';

// Prometheus text exposition, hand-rolled: two families and a gauge do not need a library.
const BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];

interface Series {
  count: number;
  sumMs: number;
  buckets: number[];
}

export class Metrics {
  private series = new Map<string, Series>();
  private readonly maxSeries = 2000;

  observe(method: string, route: string, status: number, durationMs: number): void {
    const key = `method="${method}",route="${route}",status="${status}"`;
    let s = this.series.get(key);
    if (!s) {
      if (this.series.size >= this.maxSeries) return;
      s = { count: 0, sumMs: 0, buckets: BUCKETS_MS.map(() => 0) };
      this.series.set(key, s);
    }
    s.count++;
    s.sumMs += durationMs;
    for (let i = 0; i < BUCKETS_MS.length; i++) if (durationMs <= BUCKETS_MS[i]) s.buckets[i]++;
  }

  render(paymentsByStatus: Array<{ status: string; livemode: number; count: number }>): string {
    const lines: string[] = [];
    lines.push('# HELP http_requests_total HTTP requests by route and status.', '# TYPE http_requests_total counter');
    for (const [labels, s] of this.series) lines.push(`http_requests_total{${labels}} ${s.count}`);
    lines.push('# HELP http_request_duration_ms Request latency in milliseconds.', '# TYPE http_request_duration_ms histogram');
    for (const [labels, s] of this.series) {
      BUCKETS_MS.forEach((le, i) => lines.push(`http_request_duration_ms_bucket{${labels},le="${le}"} ${s.buckets[i]}`));
      lines.push(`http_request_duration_ms_bucket{${labels},le="+Inf"} ${s.count}`);
      lines.push(`http_request_duration_ms_sum{${labels}} ${s.sumMs.toFixed(3)}`);
      lines.push(`http_request_duration_ms_count{${labels}} ${s.count}`);
    }
    lines.push('# HELP payments Payments waiting for an outcome (status pending), by mode.', '# TYPE payments gauge');
    for (const p of paymentsByStatus) lines.push(`payments{status="${p.status}",livemode="${p.livemode === 1}"} ${p.count}`);
    return lines.join('\n') + '\n';
  }
}

// Read through the partial index payments_pending (the test checks SQLite's plan).
export const pendingPaymentsQuery = (db: Store['db']) =>
  db.selectFrom('payments').select(['livemode', (eb) => eb.fn.countAll<number>().as('count')]).where('status', '=', 'pending').groupBy('livemode');

export interface MetricsOptions {
  // Where the certificate gauge takes "now" from.
  clock: Clock;
  // Bearer token a scraper must send; null: open outside production, off (404) in production.
  token: string | null;
  production: boolean;
}

// /metrics is for operators: behind a bearer token (METRICS_TOKEN), and not served at all in
// production without one. Its gauge comes from a partial index of pending payments (migration
// 0007): a scrape costs the size of the backlog, not of the payments table.
export function registerMetrics(app: FastifyInstance, store: Store, metrics: Metrics, options: MetricsOptions): void {
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.observe(req.method, route, reply.statusCode, reply.elapsedTime);
  });

  const expected = options.token;
  app.get('/metrics', { config: { auth: 'none' }, schema: { hide: true } }, async (req, reply) => {
    if (expected === null && options.production) throw new ApiError('NOT_FOUND', `No such route: GET /metrics`);
    if (expected !== null) {
      const sent = bearerToken(req.headers.authorization ?? '');
      // Compared in constant time: the token's length does not show either.
      if (sent === null || !sameSecret(sent, expected)) {
        throw new ApiError('AUTHENTICATION_REQUIRED', 'Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>".');
      }
    }
    const rows = await pendingPaymentsQuery(store.db).execute();
    // Connector certificates: days left, per active connector account (alert below 30).
    const certs = await store.db.selectFrom('connector_accounts').select(['id', 'certificate_expires_at']).where('status', '=', 'active').where('certificate_expires_at', 'is not', null).orderBy('id').limit(1000).execute();
    const nowMs = options.clock.nowMs();
    const certLines = ['# HELP connector_certificate_expires_in_days Days until an active connector account\'s client certificate expires (rotate it before 30).', '# TYPE connector_certificate_expires_in_days gauge',
      ...certs.map((c) => `connector_certificate_expires_in_days{connector_account="${c.id}"} ${Math.floor((Date.parse(c.certificate_expires_at!) - nowMs) / 86_400_000)}`)];
    reply.type('text/plain; version=0.0.4');
    const s = store.stats;
    return metrics.render([0, 1].map((livemode) => ({ status: 'pending', livemode, count: Number(rows.find((r) => Number(r.livemode) === livemode)?.count ?? 0) }))) + [
      '# HELP store_commits_total Transactions committed by this process (group commit: many writes each).',
      '# TYPE store_commits_total counter', `store_commits_total ${s.commits}`,
      '# HELP store_writes_total Write operations committed by this process.',
      '# TYPE store_writes_total counter', `store_writes_total ${s.writes}`,
      '# HELP store_failed_commits_total Transactions whose commit failed (their writes were refused).',
      '# TYPE store_failed_commits_total counter', `store_failed_commits_total ${s.failedCommits}`,
      '# HELP store_writes_refused_queue_full_total Writes answered 503 because WRITE_QUEUE_MAX_PENDING writes were pending.',
      '# TYPE store_writes_refused_queue_full_total counter', `store_writes_refused_queue_full_total ${s.refusedQueueFull}`,
      '# HELP store_writes_pending Writes accepted and not yet answered: queued, or in a transaction being committed.',
      '# TYPE store_writes_pending gauge', `store_writes_pending ${store.pendingWrites}`,
      '# HELP store_batch_replays_total Optimistic write batches rolled back and run again the plain way (store/batch.ts).',
      '# TYPE store_batch_replays_total counter', `store_batch_replays_total ${s.replays}`,
      '# HELP store_write_conflict_retries_total Writes run again in a new transaction after a PostgreSQL serialization failure or deadlock.',
      '# TYPE store_write_conflict_retries_total counter', `store_write_conflict_retries_total ${s.conflictRetries}`,
      '# HELP store_commit_ms_total Milliseconds spent committing (fsync on SQLite).',
      '# TYPE store_commit_ms_total counter', `store_commit_ms_total ${s.commitMs.toFixed(1)}`,
      '# HELP store_transaction_ms_total Milliseconds from BEGIN to the end of COMMIT.',
      '# TYPE store_transaction_ms_total counter', `store_transaction_ms_total ${s.batchMs.toFixed(1)}`,
      ...certLines,
    ].join('\n') + '\n';
  });
}
