import type { FastifyInstance } from 'fastify';
import type { Store } from '../../../store/index.js';
import type { Clock } from '../../../clock.js';
import { ref } from '../../../http/common.js';
import { typed } from '../../../http/typed.js';
import { security, tags } from '../shared/schemas.js';
import { AdminStatsQuery, MAX_STATS_DAYS } from './schemas.js';
import { adminStats } from './service.js';

export function adminStatsRoutes(scopeInstance: FastifyInstance, store: Store, clock: Clock): void {
  const scope = typed(scopeInstance);
  scope.get('/admin/stats', {
    config: { permission: 'payments:view' },
    schema: {
      operationId: 'adminGetStats', tags, security, summary: 'What the business did over a period (the back office home)',
      description: `Payments (count and approved volume per day and method, approval rate, declines by reason), refunds, disputes, settlements (paid, held, failed, pending) and webhook delivery health, over a period of São Paulo days (default: the last 30; at most ${MAX_STATS_DAYS}), for every account or one (\`accountId\`), in both modes or one (\`livemode\`). Read from daily aggregates kept by the store in the transaction of every change, so its cost does not grow with the number of payments. Disputes are not tracked yet: always zero (\`disputes.tracked: false\`).`,
      querystring: AdminStatsQuery,
      response: { 200: ref('AdminStats') },
    },
  }, (req) => adminStats(store, req.query, clock.nowMs()));
}
