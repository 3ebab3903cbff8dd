import { Type } from 'typebox';
import { IdempotencyHeaders, always } from '../../../http/common.js';
import { MAX_REASON_LENGTH } from './audit.js';

// What every admin route shares: its tag and security scheme in the OpenAPI document, the
// headers of a mutating route, the audit reason and the id parameter.
export const tags = ['Admin'];
export const security = [{ adminSession: [] }];

// Objects of the admin API that belong to no mode (accounts, sessions, settlement runs) still
// carry `livemode`, as every object does: false.
export const ADMIN_LIVEMODE = always(false, 'Admin objects are not in one mode (the admin API works across both): always `false`.');

// Headers of every mutating admin route: the session's CSRF token, and the usual optional
// Idempotency-Key (scoped to the admin user).
export const AdminMutationHeaders = Type.Object({
  'x-csrf-token': Type.String({ minLength: 1, maxLength: 256, description: 'The `csrfToken` returned by POST /admin/session. Required on POST, PATCH, PUT and DELETE (PERMISSION_DENIED otherwise).' }),
  ...IdempotencyHeaders.properties,
});

// Why an admin makes a change: kept in the audit log. Optional on most changes; required on
// money-moving ones (a settlement run, a live activation, activating a split rule, changing an
// active split rule, reordering rules, a payout bank account, embed origins).
export const reasonText = (description: string) => Type.String({ minLength: 1, maxLength: MAX_REASON_LENGTH, description });
export const optionalReason = Type.Optional(reasonText('Why, for the audit log (optional here).'));
export const requiredReason = reasonText('Why, for the audit log. Required: this action moves money.');

export const IdParams = (what: string) => Type.Object({ id: Type.String({ maxLength: 64, description: what }) }, { additionalProperties: false });


// A CSV answer (shared/csv.ts), as the OpenAPI document describes it.
export const csvResponse = {
  200: { description: 'CSV (RFC 4180, UTF-8, CRLF), with a header line.', content: { 'text/csv': { schema: Type.String() } } },
};
