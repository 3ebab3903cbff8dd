import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startManualApp, type ManualApp } from './helpers.js';
import { Worker } from '../src/jobs/worker.js';
import { readPayload, MalformedJobPayload } from '../src/jobs/payloads.js';

// Job payloads are checked against their type's schema when the worker loads the row: a
// malformed one fails that job at once (parked, with the reason as its last_error), and the
// jobs claimed with it run as usual.
for (const engine of ENGINES) {
  describe(`job payloads (${engine})`, () => {
    // A ManualClock: the jobs run on t.runDue(), when the test says.
    let t: ManualApp;
    before(async () => {
      t = await startManualApp(engine);
    });
    after(() => t.teardown());

    test('a malformed job row fails with a clear error; the others run', async () => {
      const nowMs = t.clock.nowMs();
      const row = (id: string, type: string, payload: string) => ({
        id, type, payload, run_at_ms: nowMs - 1000, attempts: 0, locked_until_ms: null, locked_by: null, last_error: null, created_at: new Date(nowMs).toISOString(),
      });
      const malformed = {
        job_malformed_not_json: ['refund.process', '{"refundId": ', 'Malformed payload for job type refund.process: not JSON.'],
        job_malformed_type: ['refund.process', '{"refundId": 42}', 'Malformed payload for job type refund.process: /refundId must be string.'],
        job_malformed_missing: ['settlement.payout', '{}', 'Malformed payload for job type settlement.payout: / must have required properties settlementId.'],
        job_malformed_wrong_id: ['payment.confirm', '{"paymentId": "ref_01jc6v8x2a9m3yq0d7b4e5f6g8"}', 'Malformed payload for job type payment.confirm: /paymentId must match pattern'],
        job_malformed_extra: ['settlement.run', '{"runId": "str_01jc6v8x2a9m3yq0d7b4e5f6g8", "date": "2026-01-01"}', 'Malformed payload for job type settlement.run:'],
        job_malformed_unknown: ['no.such.job', '{}', 'Malformed payload for job type no.such.job: no payload schema for this job type.'],
      } as const;
      await t.store.write(async (tx) => {
        for (const [id, [type, payload]] of Object.entries(malformed)) await tx.insertInto('jobs').values(row(id, type, payload)).execute();
        // A well-formed refund job for a refund that does not exist: its handler completes it.
        await tx.insertInto('jobs').values(row('job_wellformed', 'refund.process', '{"refundId": "ref_01jc6v8x2a9m3yq0d7b4e5f6g8"}')).execute();
      });
      // One claim: the malformed rows fail as they load, the well-formed one runs.
      assert.equal((await t.runDue()).jobs, 1, 'the well-formed job ran');
      const rows = await t.store.db.selectFrom('jobs').selectAll().where('id', 'like', 'job_%formed%').orderBy('id').execute();
      assert.deepEqual(rows.map((r) => r.id).sort(), Object.keys(malformed).sort(), 'the well-formed job ran and was completed');
      for (const r of rows) {
        const expected = malformed[r.id as keyof typeof malformed][2];
        assert.ok(r.last_error!.startsWith(expected), `${r.id}: ${r.last_error}`);
        // Failed for good: parked (never claimed again), tried once.
        assert.ok(Number(r.run_at_ms) > nowMs + 100 * 365 * 86_400_000, `${r.id} is parked`);
        assert.equal(Number(r.attempts), 1);
        assert.equal(r.locked_by, null);
      }
      // The worker keeps going: a new job after them still runs.
      await t.store.write((tx) => tx.insertInto('jobs').values(row('job_after', 'refund.process', '{"refundId": "ref_01jc6v8x2a9m3yq0d7b4e5f6g9"}')).execute());
      assert.equal((await t.runDue()).jobs, 1, 'the new job ran');
      assert.equal(await t.store.db.selectFrom('jobs').select('id').where('id', '=', 'job_after').executeTakeFirst(), undefined, 'the next job ran');
    });
  });
}

describe('job payload schemas', () => {
  test('a handler for a job type without a payload schema is refused when the worker is made', () => {
    assert.throws(
      () => new Worker({} as never, { 'no.such.job': async () => {} }, { pollMs: 10, leaseMs: 1000 }, console as never),
      { message: 'Job type no.such.job has a handler but no payload schema (jobs/payloads.ts).' },
    );
  });

  test('readPayload gives the typed payload, or says what is wrong', () => {
    assert.deepEqual(readPayload({ type: 'refund.process', payload: '{"refundId":"ref_01jc6v8x2a9m3yq0d7b4e5f6g8"}' }, 'refund.process'), { refundId: 'ref_01jc6v8x2a9m3yq0d7b4e5f6g8' });
    assert.throws(() => readPayload({ type: 'refund.process', payload: '{"refundId":""}' }, 'refund.process'), (e: unknown) => e instanceof MalformedJobPayload && /refundId must match pattern/.test(e.message));
    assert.throws(() => readPayload({ type: 'settlement.run', payload: '{"runId":"str_1"}' }, 'refund.process'), { message: 'Malformed payload for job type settlement.run: expected a refund.process job.' });
  });
});
