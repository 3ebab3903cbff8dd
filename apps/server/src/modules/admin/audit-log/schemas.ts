import { Type, type Static } from 'typebox';
import { constant, freeForm, ListQueryBase, listOf, refTo } from '../../../http/common.js';

const Snapshot = Type.Union([freeForm('The object\'s fields at that moment.'), Type.Null()]);

export const AuditActor = Type.Object(
  { email: Type.String(), role: Type.String({ description: '`admin` or `viewer`, as it was at the time.' }) },
  { $id: 'AuditActor', additionalProperties: false, description: 'The admin who made the change.' },
);

export const AuditEntry = Type.Object(
  {
    id: Type.String({ description: 'Prefix `aud_`.' }),
    object: constant('audit_entry'),
    livemode: Type.Boolean({ description: 'The mode of the object changed (`false` for objects without a mode, such as accounts).' }),
    actor: refTo(AuditActor),
    action: Type.String({ description: '`<object type>.<verb>`, e.g. `split_rule.activate`, `settlement_run.create`, `account.activate_live`.' }),
    objectType: Type.String({ description: '`split_rule`, `account`, `settlement_run`, ...' }),
    objectId: Type.String(),
    accountId: Type.Union([Type.String(), Type.Null()], { description: 'The merchant account the object belongs to (the account itself for `account`), or null for objects of no account (a settlement run spans them all).' }),
    accountName: Type.Union([Type.String(), Type.Null()], { description: 'That account\'s name (issue 29: merchants are named, not only shown by id).' }),
    before: Snapshot,
    after: Snapshot,
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why, as the admin said it. Required on money-moving actions.' }),
    ip: Type.String({ description: 'The client address of the request, or `command line` for a change made with `npm run cli` (its `userAgent` names the command and the system user).' }),
    userAgent: Type.Union([Type.String(), Type.Null()]),
    correlationId: Type.String({ description: 'The request\'s correlation id (also in the request log).' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'AuditEntry', additionalProperties: false, description: 'One admin change: who, when, from where, what it was before and after, and why. Written in the same transaction as the change; never updated.' },
);
export type AuditEntry = Static<typeof AuditEntry>;
export const AuditEntryList = listOf('AuditEntry', 'AuditEntryList');

export const ListAuditLogQuery = Type.Object(
  {
    ...ListQueryBase,
    action: Type.Optional(Type.String({ maxLength: 100, description: 'Only this action, e.g. `split_rule.update`.' })),
    objectType: Type.Optional(Type.String({ maxLength: 100 })),
    objectId: Type.Optional(Type.String({ maxLength: 64, description: 'Only changes to this object.' })),
    actorEmail: Type.Optional(Type.String({ maxLength: 254, description: 'Only changes made by this admin (case-insensitive).' })),
  },
  { additionalProperties: false },
);
export type ListAuditLogQuery = Static<typeof ListAuditLogQuery>;

export const auditLogSchemas = [AuditActor, AuditEntry, AuditEntryList];

