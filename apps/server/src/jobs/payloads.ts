import { Type, type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { ID_PREFIXES, type IdKind } from '../domain/ids.js';
import type { JobRow } from './queue.js';

// What each job type carries, as a TypeBox schema: the payload is JSON written by one release
// and read by another (a job can wait in the table across a deploy), or by hand in an incident,
// so it is checked when the row is loaded, with the compiled validator, before any handler sees
// it. A payload that does not match is not retried (it would not match the next time either):
// the worker parks the job with an error that says what is wrong (worker.ts).
const idOf = (kind: IdKind) => Type.String({ pattern: `^${ID_PREFIXES[kind]}[0-9a-z]{1,60}$`, description: `A ${kind} id (\`${ID_PREFIXES[kind]}...\`).` });
const nothing = Type.Object({}, { additionalProperties: false });

export const JOB_PAYLOADS = {
  'payment.confirm': Type.Object({ paymentId: idOf('payment') }, { additionalProperties: false }),
  'payment.expire': Type.Object({ paymentId: idOf('payment') }, { additionalProperties: false }),
  'refund.process': Type.Object({ refundId: idOf('refund') }, { additionalProperties: false }),
  'settlement.payout': Type.Object({ settlementId: idOf('settlement') }, { additionalProperties: false }),
  'settlement.run': Type.Object({ runId: idOf('settlementRun') }, { additionalProperties: false }),
  // Read a payout by Pix back from its PSP (after its webhook: a hint).
  'settlement.payout_sync': Type.Object({ settlementId: idOf('settlement') }, { additionalProperties: false }),
  // Read a live Pix payment's truth at its PSP (after a callback, or a refund in processing).
  'payment.sync': Type.Object({ paymentId: idOf('payment') }, { additionalProperties: false }),
  // Apply the verified Adyen notifications stored for a live card payment (issue 27).
  'card.sync': Type.Object({ paymentId: idOf('payment') }, { additionalProperties: false }),
  'card.capture': Type.Object({ paymentId: idOf('payment') }, { additionalProperties: false }),
  'checkout_session.expire': Type.Object({ sessionId: idOf('checkoutSession') }, { additionalProperties: false }),
  // Recurring jobs carry nothing: the row is their schedule.
  'settlement.daily': nothing,
  'maintenance.purge': nothing,
  'pix.reconcile': nothing,
  'settlement.payout_reconcile': nothing,
  'stats.fold': nothing,
} satisfies Record<string, TSchema>;

export type JobType = keyof typeof JOB_PAYLOADS;
export type JobPayload<T extends JobType> = Static<(typeof JOB_PAYLOADS)[T]>;

export class MalformedJobPayload extends Error {
  constructor(readonly jobType: string, problem: string) {
    super(`Malformed payload for job type ${jobType}: ${problem}.`);
    this.name = 'MalformedJobPayload';
  }
}

type Check = (value: unknown) => string | null;

function compile(schema: TSchema): Check {
  const validator = Compile(schema);
  return (value) => {
    if (validator.Check(value)) return null;
    const [first] = validator.Errors(value);
    // The path and the rule, never the value (a payload may one day carry something private).
    return first ? `${first.instancePath || '/'} ${first.message}` : 'does not match its schema';
  };
}

// Payloads already checked against their type's product schema (JOB_PAYLOADS), by job object:
// the worker checks each row it claims, and the row's handler reads the same object with
// readPayload, which then neither parses nor checks it again. Kept with the text it was read
// from, so a row whose payload has changed since is read afresh.
const checked = new WeakMap<object, { payload: string; value: unknown }>();

// One compiled validator per type, built once. A worker can be given more (tests, tools).
export class PayloadCheck {
  private readonly checks = new Map<string, Check>();
  // The types checked with their product schema (not one given to this instance instead): only
  // their payloads are remembered for readPayload.
  private readonly productTypes = new Set<string>();

  constructor(schemas: Record<string, TSchema> = {}) {
    for (const [type, schema] of Object.entries({ ...JOB_PAYLOADS, ...schemas })) this.checks.set(type, compile(schema));
    for (const type of Object.keys(JOB_PAYLOADS)) if (!Object.hasOwn(schemas, type)) this.productTypes.add(type);
  }

  has(type: string): boolean {
    return this.checks.has(type);
  }

  // The parsed payload, or MalformedJobPayload saying why not.
  read(job: Pick<JobRow, 'type' | 'payload'>): unknown {
    const check = this.checks.get(job.type);
    if (!check) throw new MalformedJobPayload(job.type, 'no payload schema for this job type');
    let value: unknown;
    try {
      value = JSON.parse(job.payload);
    } catch {
      throw new MalformedJobPayload(job.type, 'not JSON');
    }
    const problem = check(value);
    if (problem !== null) throw new MalformedJobPayload(job.type, problem);
    if (this.productTypes.has(job.type)) checked.set(job, { payload: job.payload, value });
    return value;
  }
}

const productChecks = new PayloadCheck();

// A handler's typed view of its job's payload. The worker checked it when it loaded the row:
// that value is returned. A job the worker has not checked (a handler called any other way) is
// parsed and checked here, with the same guarantee.
export function readPayload<T extends JobType>(job: Pick<JobRow, 'type' | 'payload'>, type: T): JobPayload<T> {
  if (job.type !== type) throw new MalformedJobPayload(job.type, `expected a ${type} job`);
  const seen = checked.get(job);
  if (seen !== undefined && seen.payload === job.payload) return seen.value as JobPayload<T>;
  return productChecks.read(job) as JobPayload<T>;
}
