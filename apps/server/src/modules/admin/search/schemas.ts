import { Type, type Static } from 'typebox';
import { cents, constant, stringEnum } from '../../../http/common.js';

// How far back the payment scans of the search box look (e-mail, last four digits + amount):
// they read payments by id range, so their cost is bounded by the window, not by the table.
export const SEARCH_PAYMENT_WINDOW_DAYS = 90;
export const MAX_SEARCH_RESULTS = 20;

export const SEARCH_RESULT_TYPES = ['account', 'payment', 'refund', 'recipient', 'split_rule', 'receivable', 'settlement', 'settlement_run', 'webhook_endpoint', 'checkout_session'] as const;

export const AdminSearchQuery = Type.Object(
  { q: Type.String({ minLength: 1, maxLength: 200, description: 'An id of any kind (`pay_`, `rcp_`, `stl_`, `acct_`, `ref_`, `rcv_`, `spr_`, `str_`, `whe_`, `cs_`), a CNPJ (recipients), an e-mail (merchant accounts; payers of recent payments), the last four card digits and an amount (`4242 100,00`), or part of a merchant\'s name.' }) },
  { additionalProperties: false },
);
export type AdminSearchQuery = Static<typeof AdminSearchQuery>;

export const AdminSearchResult = Type.Object(
  {
    object: constant('search_result'),
    type: stringEnum(SEARCH_RESULT_TYPES),
    id: Type.String(),
    accountId: Type.Union([Type.String(), Type.Null()], { description: 'The merchant account it belongs to (null for a settlement run).' }),
    accountName: Type.Union([Type.String(), Type.Null()]),
    livemode: Type.Boolean({ description: 'Its mode; false for what belongs to no mode (an account, a settlement run).' }),
    label: Type.String({ description: 'What it is, in a few words: a recipient\'s name and masked CNPJ, a payment\'s method and card digits, ...' }),
    amount: Type.Union([cents(), Type.Null()], { description: 'Centavos, where it has an amount.' }),
    status: Type.Union([Type.String(), Type.Null()]),
    parentId: Type.Union([Type.String(), Type.Null()], { description: 'Where it is shown: a refund\'s or receivable\'s payment, a settlement\'s run.' }),
    createdAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'AdminSearchResult', additionalProperties: false, description: 'One thing the search found, with its merchant.' },
);
export type AdminSearchResult = Static<typeof AdminSearchResult>;

export const AdminSearchResults = Type.Object(
  {
    object: constant('list'),
    query: Type.String(),
    interpretedAs: stringEnum(['id', 'document', 'email', 'card', 'name'], { description: 'How the query was read.' }),
    data: Type.Array(Type.Unsafe<AdminSearchResult>({ $ref: 'AdminSearchResult' }), { description: `At most ${MAX_SEARCH_RESULTS}, newest first.` }),
  },
  { $id: 'AdminSearchResults', additionalProperties: false, description: 'What the search box found, and how it read the query.' },
);
export type AdminSearchResults = Static<typeof AdminSearchResults>;

export const adminSearchSchemas = [AdminSearchResult, AdminSearchResults];
