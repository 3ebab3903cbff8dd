import assert from 'node:assert/strict';
import type { JobRow } from '../../jobs/queue.js';

// The payload of a payment job (confirm, expire), checked when read.
export function parseJobPayload(job: JobRow): { paymentId: string } {
  const payload: unknown = JSON.parse(job.payload);
  assert(typeof payload === 'object' && payload !== null && 'paymentId' in payload && typeof payload.paymentId === 'string', `job ${job.id}: payload without a paymentId`);
  return { paymentId: payload.paymentId };
}
