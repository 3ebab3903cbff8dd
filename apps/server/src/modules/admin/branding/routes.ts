import type { FastifyInstance } from 'fastify';
import type { Store } from '../../../store/index.js';
import { ref, refTo } from '../../../http/common.js';
import { AdminMutationHeaders, IdParams, security, tags } from '../shared/schemas.js';
import { LOGO_TYPES, MAX_LOGO_BYTES, UpdateCheckoutBrandingRequest } from './schemas.js';
import { brandingAudit, getBranding, updateBranding } from './service.js';
import { typed } from '../../../http/typed.js';

const AccountIdParams = IdParams('Merchant account id (`acct_...`).');

export function brandingRoutes(scopeInstance: FastifyInstance, store: Store): void {
  const scope = typed(scopeInstance);
  scope.get('/admin/accounts/:id/checkout-branding', {
    config: { auth: 'none', permission: 'accounts:view' },
    schema: {
      operationId: 'adminGetCheckoutBranding', tags, security, summary: 'Fetch an account\'s checkout branding',
      description: 'The display name, accent color and logo the hosted checkout shows for the account (nulls where the defaults apply).',
      params: AccountIdParams,
      response: { 200: ref('CheckoutBranding') },
    },
  }, (req) => getBranding(store, req.params.id));

  scope.patch('/admin/accounts/:id/checkout-branding', {
    config: { auth: 'none', permission: 'accounts:update', audit: brandingAudit.update },
    schema: {
      operationId: 'adminUpdateCheckoutBranding', tags, security, summary: 'Set an account\'s checkout branding',
      description: `Only the fields sent change; null clears one. \`displayName\` 1-60 characters. \`accentColor\` \`#rrggbb\` with a WCAG AA contrast (at least 4.5:1) against white, else VALIDATION_ERROR (param \`accentColor\`) saying its ratio. \`logo\`: ${LOGO_TYPES.join(', ')} (the file's signature must match), at most ${MAX_LOGO_BYTES / 1024} KiB, sent in base64 (the request stays within the body limit, BODY_LIMIT_BYTES); the instance serves it at \`/checkout/logos/<sha256>\` to the hosted page, which loads nothing from elsewhere. A refused field changes nothing.`,
      headers: AdminMutationHeaders,
      params: AccountIdParams,
      body: refTo(UpdateCheckoutBrandingRequest),
      response: { 200: ref('CheckoutBranding') },
    },
  }, (req) => updateBranding(req.ctx, req.params.id, req.body));
}
