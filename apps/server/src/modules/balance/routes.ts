import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { sql } from 'kysely';
import type { Store } from '../../store/index.js';
import { constant, ref } from '../../http/common.js';
import { localDate } from '../accounts/settings.js';
import type { Owner } from '../events/service.js';

const Amounts = {
  pending: Type.Integer({ description: 'Owed but not yet available (availableOn in the future).' }),
  available: Type.Integer({ description: 'Available: will be paid by the next settlement run.' }),
  settled: Type.Integer({ description: 'Already settled (paid out or being paid).' }),
};

export const Balance = Type.Object(
  {
    object: constant('balance'),
    livemode: Type.Boolean(),
    asOf: Type.String({ format: 'date', description: 'The São Paulo date the pending/available line is drawn at.' }),
    merchant: Type.Object(Amounts, { additionalProperties: false }),
    recipients: Type.Array(Type.Object({ recipientId: Type.String(), ...Amounts }, { additionalProperties: false })),
  },
  { $id: 'Balance', additionalProperties: false, description: 'Totals of the receivables in centavos, for the merchant and for each of its recipients.' },
);

interface Totals { pending: number; available: number; settled: number }

export async function getBalance(store: Store, owner: Owner) {
  const today = localDate(store.clock.nowMs());
  // A literal, not a parameter: PostgreSQL only matches the GROUP BY expression to the selected
  // one when they are the same text (`today` is our own YYYY-MM-DD, never user input).
  const bucket = sql<string>`case when status = 'settled' then 'settled' when available_on <= ${sql.lit(today)} then 'available' else 'pending' end`;
  const rows = await store.db.selectFrom('receivables')
    .select(['payee_type', 'payee_id', bucket.as('bucket'), (eb) => eb.fn.sum<number>('amount').as('total')])
    .where('account_id', '=', owner.accountId).where('livemode', '=', owner.livemode ? 1 : 0).where('status', '!=', 'canceled')
    .groupBy(['payee_type', 'payee_id', bucket])
    .execute();
  const merchant: Totals = { pending: 0, available: 0, settled: 0 };
  const recipients = new Map<string, Totals>();
  for (const r of rows) {
    const target = r.payee_type === 'merchant' ? merchant : recipients.get(r.payee_id) ?? recipients.set(r.payee_id, { pending: 0, available: 0, settled: 0 }).get(r.payee_id)!;
    target[r.bucket as keyof Totals] += Number(r.total);
  }
  return {
    object: 'balance' as const,
    livemode: owner.livemode,
    asOf: today,
    merchant,
    recipients: [...recipients.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([recipientId, t]) => ({ recipientId, ...t })),
  };
}

export function balanceRoutes(app: FastifyInstance, store: Store): void {
  app.get('/v1/balance', {
    schema: {
      operationId: 'getBalance', tags: ['Balance'], summary: 'Fetch the balance',
      description: 'Pending, available and settled totals of the receivables, for the merchant and per recipient.',
      response: { 200: ref('Balance') },
    },
  }, (req) => getBalance(store, req.ctx));
}
