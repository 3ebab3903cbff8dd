import type { FastifyInstance } from 'fastify';
import type { Store } from '../../../store/index.js';
import { ref } from '../../../http/common.js';
import { security, tags } from '../shared/schemas.js';
import { ListAuditLogQuery } from './schemas.js';
import { listAuditLog } from './service.js';
import { typed } from '../../../http/typed.js';

export function auditLogRoutes(scopeInstance: FastifyInstance, store: Store): void {
  const scope = typed(scopeInstance);
  scope.get('/admin/audit-log', {
    config: { auth: 'none', permission: 'audit_log:view' },
    schema: {
      operationId: 'adminListAuditLog', tags, security, summary: 'List the audit log',
      description: 'Every admin change, newest first, with cursors: who made it (email and role), when, from which address and user agent, the object before and after, and the reason. Filter by `action`, `objectType`, `objectId`, `actorEmail`, `createdGte`/`createdLte`.',
      querystring: ListAuditLogQuery,
      response: { 200: ref('AuditEntryList') },
    },
  }, (req) => listAuditLog(store, req.query));
}
