import type { FastifyInstance } from 'fastify';
import type { Store } from '../../../store/index.js';
import type { Clock } from '../../../clock.js';
import { ref } from '../../../http/common.js';
import { typed } from '../../../http/typed.js';
import { security, tags } from '../shared/schemas.js';
import { AdminSearchQuery, MAX_SEARCH_RESULTS, SEARCH_PAYMENT_WINDOW_DAYS } from './schemas.js';
import { adminSearch } from './service.js';

export function adminSearchRoutes(scopeInstance: FastifyInstance, store: Store, clock: Clock): void {
  const scope = typed(scopeInstance);
  scope.get('/admin/search', {
    config: { permission: 'payments:view' },
    schema: {
      operationId: 'adminSearch', tags, security, summary: 'Find anything (the back office\'s search box)',
      description: `One query, read by its shape: an id of any kind (\`pay_\`, \`rcp_\`, \`stl_\`, \`acct_\`, \`ref_\`, \`rcv_\`, \`spr_\`, \`str_\`, \`whe_\`, \`cs_\`); a CNPJ (recipients; payers' CPF/CNPJ are stored masked and cannot be searched); an e-mail (merchant accounts, and payers of the payments of the last ${SEARCH_PAYMENT_WINDOW_DAYS} days); the last four card digits and an amount in reais (\`4242 100,00\`: card payments of the last ${SEARCH_PAYMENT_WINDOW_DAYS} days); otherwise part of a merchant's name. At most ${MAX_SEARCH_RESULTS} results, each with its merchant's name; \`interpretedAs\` says how the query was read.`,
      querystring: AdminSearchQuery,
      response: { 200: ref('AdminSearchResults') },
    },
  }, (req) => adminSearch(store, req.query.q, clock.nowMs()));
}
