import { Type, type Static } from 'typebox';
import { ListQueryBase, listOf, stringEnum } from '../../../http/common.js';
import { SETTLEMENT_STATUSES } from '../../../domain/states.js';
import { Settlement } from '../../settlements/schemas.js';
import { requiredReason } from '../shared/schemas.js';

export const SettlementRunRequest = Type.Object(
  {
    date: Type.Optional(Type.String({ format: 'date', description: 'Settle what is available on or before this date: today in São Paulo (the default) or earlier. A later date is refused (VALIDATION_ERROR): nothing is paid before it is available.' })),
    reason: requiredReason,
  },
  { $id: 'SettlementRunRequest', additionalProperties: false, examples: [{ reason: 'Daily run missed after the outage of 2026-11-20' }] },
);
export type SettlementRunRequest = Static<typeof SettlementRunRequest>;

// A settlement with the merchant account it belongs to: a run spans every account.
export const AdminSettlement = Type.Object(
  { ...Settlement.properties, accountId: Type.String({ description: 'The merchant account (`acct_`).' }), accountName: Type.String({ description: 'The merchant account\'s name (issue 29: merchants are named, not only shown by id).' }) },
  { $id: 'AdminSettlement', additionalProperties: false, description: 'A settlement of a run, with its merchant account.' },
);
export type AdminSettlement = Static<typeof AdminSettlement>;
export const AdminSettlementList = listOf('AdminSettlement', 'AdminSettlementList');

export const ListRunSettlementsQuery = Type.Object(
  {
    limit: ListQueryBase.limit,
    startingAfter: ListQueryBase.startingAfter,
    endingBefore: ListQueryBase.endingBefore,
    status: Type.Optional(stringEnum(SETTLEMENT_STATUSES, { description: '`failed`: the payouts the bank refused (their receivables went back to pending); `held`: merchant settlements waiting for the account\'s payout bank account.' })),
  },
  { additionalProperties: false },
);
export type ListRunSettlementsQuery = Static<typeof ListRunSettlementsQuery>;

// POST /admin/settlements/{id}/retry (issue 26).
export const RetrySettlementRequest = Type.Object(
  { reason: requiredReason },
  { $id: 'RetrySettlementRequest', additionalProperties: false, description: 'Why the payout is retried (it sends money): kept in the audit log.', examples: [{ reason: 'Partner fixed the Pix key (ticket 5120)' }] },
);
export type RetrySettlementRequest = Static<typeof RetrySettlementRequest>;

export const settlementRunSchemas = [SettlementRunRequest, AdminSettlement, AdminSettlementList, RetrySettlementRequest];

