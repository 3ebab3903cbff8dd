import { Type, type Static } from 'typebox';
import { always, cents, constant, int64, refTo, stringEnum } from '../../../http/common.js';
import { PAYMENT_STATUSES, SETTLEMENT_STATUSES } from '../../../domain/states.js';

// The back office's home: what the business did over a period, from the daily aggregates
// (stats_daily + stats_deltas, migration 0011), never from a scan of the payments.

// The longest period one request may ask for (a year and a day: "this year" plus the leap day).
export const MAX_STATS_DAYS = 366;
// The most failing endpoints listed (the count is exact).
export const MAX_FAILING_ENDPOINTS = 20;

const day = (description: string) => Type.String({ format: 'date', description });
const centavos = (description: string) => cents({ description: `${description} Centavos.` });

export const AdminStatsQuery = Type.Object(
  {
    from: Type.Optional(day('First day of the period, São Paulo time (default: 29 days before `to`).')),
    to: Type.Optional(day('Last day of the period, included, São Paulo time (default: today).')),
    accountId: Type.Optional(Type.String({ maxLength: 64, description: 'Only this merchant account (`acct_...`).' })),
    livemode: Type.Optional(Type.Boolean({ description: 'Only live (`true`) or only test (`false`) data; both when omitted.' })),
  },
  { additionalProperties: false },
);
export type AdminStatsQuery = Static<typeof AdminStatsQuery>;

const count = (description?: string) => int64({ minimum: 0, ...(description ? { description } : {}) });

// Every object below is a named component, and every integer says its width (issue 28).
export const AdminStatsCountAmount = Type.Object(
  { count: count(), amount: centavos('Sum of their amounts.') },
  { $id: 'AdminStatsCountAmount', additionalProperties: false, description: 'How many, and their sum in centavos.' },
);
const countAmount = (what: string) => refTo(AdminStatsCountAmount, { description: what });

export const AdminStatsPaymentDay = Type.Object(
  {
    date: day('The day payments were created.'),
    method: stringEnum(['pix', 'credit_card']),
    count: count('Payments created, in any status.'),
    approvedCount: count('Of them, approved (refunded ones included).'),
    volume: centavos('Amount of the approved ones (before refunds).'),
  },
  { $id: 'AdminStatsPaymentDay', additionalProperties: false, description: 'Payments of one day and method.' },
);

export const AdminStatsPaymentStatus = Type.Object(
  { status: stringEnum([...PAYMENT_STATUSES]), count: count(), amount: centavos('Sum of their amounts.') },
  { $id: 'AdminStatsPaymentStatus', additionalProperties: false, description: 'Payments of the period in one current status.' },
);

export const AdminStatsDecline = Type.Object(
  { reason: Type.String({ description: 'The failure code (`card_declined`, `insufficient_funds`, `provider_unavailable`, ...).' }), status: stringEnum(['declined', 'failed']), count: count(), amount: centavos('Sum of their amounts.') },
  { $id: 'AdminStatsDecline', additionalProperties: false, description: 'Declined or failed payments of one reason.' },
);

export const AdminStatsPayments = Type.Object(
  {
    days: Type.Array(refTo(AdminStatsPaymentDay), { description: 'One entry per day and method that had payments, oldest first. Days without payments are left out.' }),
    byStatus: Type.Array(refTo(AdminStatsPaymentStatus), { description: 'Payments of the period by their current status.' }),
    count: count(),
    approvedCount: count(),
    volume: centavos('Amount of the approved payments.'),
    approvalRate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description: 'Approved ÷ (approved + declined + failed): payments still pending, canceled or expired have no outcome and are left out. Null when none had an outcome.' }),
    declines: Type.Array(refTo(AdminStatsDecline), { description: 'Declined and failed payments by reason, most frequent first.' }),
  },
  { $id: 'AdminStatsPayments', additionalProperties: false, description: 'Payments created in the period.' },
);

export const AdminStatsRefunds = Type.Object(
  {
    succeeded: countAmount('Refunded amounts.'),
    pending: countAmount('Amounts being refunded.'),
    failed: countAmount('Amounts the provider refused to refund.'),
    amountRefundedOfPeriod: centavos('Refunded so far of the payments created in the period.'),
  },
  { $id: 'AdminStatsRefunds', additionalProperties: false, description: 'Refunds created in the period, by status.' },
);

export const AdminStatsDisputes = Type.Object(
  { count: count(), amount: centavos('Disputed amount.'), tracked: always(false, 'Disputes (chargebacks) are not tracked by this service yet: count and amount are always 0 until they are.') },
  { $id: 'AdminStatsDisputes', additionalProperties: false, description: 'Disputes opened in the period.' },
);

export const AdminStatsSettlements = Type.Object(
  Object.fromEntries(SETTLEMENT_STATUSES.map((s) => [s, countAmount(`${s[0].toUpperCase()}${s.slice(1)} settlements.`)])) as Record<(typeof SETTLEMENT_STATUSES)[number], ReturnType<typeof countAmount>>,
  { $id: 'AdminStatsSettlements', additionalProperties: false, description: 'Settlements dated in the period by status: `paid`, `held` (waiting for the merchant\'s payout bank account), `failed` (the bank refused the payout; its receivables went back to pending), `pending` (payout under way).' },
);

export const AdminStatsFailingEndpoint = Type.Object(
  {
    id: Type.String(), accountId: Type.String(), accountName: Type.String({ description: 'The merchant account\'s name (issue 29: merchants are named, not only shown by id).' }), livemode: Type.Boolean(), url: Type.String(),
    enabled: Type.Boolean(),
    failingSince: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    disabledReason: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'AdminStatsFailingEndpoint', additionalProperties: false, description: 'A webhook endpoint failing now, or disabled for failing.' },
);

export const AdminStatsWebhooks = Type.Object(
  {
    succeeded: count('Deliveries created in the period that the endpoint acknowledged (2xx).'),
    failed: count('Deliveries that gave up after every retry.'),
    pending: count('Deliveries still being tried.'),
    successRate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description: 'succeeded ÷ (succeeded + failed); null when none finished.' }),
    failingEndpointCount: count('Endpoints failing now (a delivery to them failed and none has succeeded since) or disabled for failing.'),
    failingEndpoints: Type.Array(refTo(AdminStatsFailingEndpoint), { description: `The failing endpoints, longest failing first (at most ${MAX_FAILING_ENDPOINTS}).` }),
  },
  { $id: 'AdminStatsWebhooks', additionalProperties: false, description: 'Webhook delivery health: deliveries created in the period, and the endpoints failing now (not filtered by period).' },
);

export const AdminStats = Type.Object(
  {
    object: constant('admin_stats'),
    from: day('First day of the period.'),
    to: day('Last day of the period (included).'),
    timeZone: constant('America/Sao_Paulo', { description: 'Days are São Paulo days (UTC−03:00; Brazil has no daylight saving time since 2019).' }),
    accountId: Type.Union([Type.String(), Type.Null()], { description: 'The account filtered on, or null for every account.' }),
    livemode: always(false, 'Admin objects are not in one mode: always false (the mode filtered on is `mode`).'),
    mode: stringEnum(['live', 'test', 'both'], { description: 'The mode filtered on (`livemode` of the query), or both.' }),
    payments: refTo(AdminStatsPayments),
    refunds: refTo(AdminStatsRefunds),
    disputes: refTo(AdminStatsDisputes),
    settlements: refTo(AdminStatsSettlements),
    webhooks: refTo(AdminStatsWebhooks),
  },
  { $id: 'AdminStats', additionalProperties: false, description: 'What the business did over a period: payments, refunds, disputes, settlements and webhook deliveries, from daily aggregates.' },
);
export type AdminStats = Static<typeof AdminStats>;

export const adminStatsSchemas = [
  AdminStatsCountAmount, AdminStatsPaymentDay, AdminStatsPaymentStatus, AdminStatsDecline, AdminStatsPayments, AdminStatsRefunds, AdminStatsDisputes,
  AdminStatsSettlements, AdminStatsFailingEndpoint, AdminStatsWebhooks, AdminStats,
];
