// The sustained-rate step search (sustained.ts) against a model server whose capacity is known:
// confirmations keep up below the capacity and fall behind above it by the difference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSustainedRate, judgeStep, type StepOutcome } from '../sustained.ts';

const STEP_S = 5;

// A server that confirms at most `capacity` payments a second; `inFlight` pending at any time
// from the confirmation delay alone.
function model(capacity: number, opts: { lateAbove?: number; inFlight?: number } = {}) {
  const asked: number[] = [];
  const run = async (rate: number): Promise<StepOutcome> => {
    asked.push(rate);
    const scheduled = rate * STEP_S;
    const start = opts.inFlight ?? 20;
    const behind = Math.max(0, rate - capacity) * STEP_S;
    const lateSends = opts.lateAbove !== undefined && rate > opts.lateAbove ? Math.ceil(scheduled * 0.05) : 0;
    return { ratePerSec: rate, scheduled, lateSends, non2xx: 0, errors: 0, backlogStart: start, backlogEnd: start + behind };
  };
  return { run, asked };
}

const policy = { startRatePerSec: 100, growth: 1.5, resolution: 0.05, maxSteps: 14 };

test('finds a rate the server holds, within the resolution below its capacity, in a bounded number of steps', async () => {
  for (const capacity of [37, 100, 180, 333, 1234]) {
    const m = model(capacity);
    const r = await findSustainedRate(m.run, policy);
    assert.ok(r.sustainedRatePerSec <= capacity * 1.021 + 10 / STEP_S, `capacity ${capacity}: found ${r.sustainedRatePerSec} above what it holds`);
    assert.ok(r.sustainedRatePerSec >= capacity * 0.9, `capacity ${capacity}: found only ${r.sustainedRatePerSec}`);
    assert.ok(r.steps.length <= policy.maxSteps);
    assert.ok(r.failedRatePerSec !== null && r.failedRatePerSec > r.sustainedRatePerSec);
    // Every passing step is at or below every failing one.
    const passes = r.steps.filter((s) => s.pass).map((s) => s.ratePerSec);
    const fails = r.steps.filter((s) => !s.pass).map((s) => s.ratePerSec);
    assert.ok(Math.max(...passes) < Math.min(...fails));
  }
});

test('a first step the server cannot hold makes the search go down, not report it', async () => {
  const m = model(30);
  const r = await findSustainedRate(m.run, { ...policy, startRatePerSec: 400 });
  assert.ok(m.asked[1] < m.asked[0]);
  assert.ok(r.sustainedRatePerSec > 0 && r.sustainedRatePerSec <= 32);
});

test('late sends (the generator as the limit) fail a step even when the backlog stays level', async () => {
  const m = model(10_000, { lateAbove: 150 });
  const r = await findSustainedRate(m.run, policy);
  assert.ok(r.sustainedRatePerSec <= 150, `found ${r.sustainedRatePerSec}`);
  assert.match(r.steps.find((s) => !s.pass)!.reason, /late/);
});

test('the step rule: level backlog passes; growth over max(10, 2 %) fails; any non-2xx fails', () => {
  const base = { ratePerSec: 100, scheduled: 1000, lateSends: 0, non2xx: 0, errors: 0, backlogStart: 50 };
  assert.equal(judgeStep({ ...base, backlogEnd: 50 }).pass, true);
  assert.equal(judgeStep({ ...base, backlogEnd: 70 }).pass, true); // +20 = 2 % of 1000
  assert.equal(judgeStep({ ...base, backlogEnd: 71 }).pass, false);
  assert.equal(judgeStep({ ...base, scheduled: 100, backlogEnd: 60 }).pass, true); // the floor of 10
  assert.equal(judgeStep({ ...base, scheduled: 100, backlogEnd: 61 }).pass, false);
  assert.equal(judgeStep({ ...base, backlogEnd: 10 }).pass, true); // a backlog that shrinks
  assert.equal(judgeStep({ ...base, backlogEnd: 50, non2xx: 1 }).pass, false);
  assert.equal(judgeStep({ ...base, backlogEnd: 50, lateSends: 10 }).pass, false); // 1 %
  assert.equal(judgeStep({ ...base, backlogEnd: 50, lateSends: 9 }).pass, true);
});

test('a generator that keeps no rate at all gives 0, within the step limit', async () => {
  const m = model(10_000, { lateAbove: 0 });
  const r = await findSustainedRate(m.run, { ...policy, startRatePerSec: 8 });
  assert.equal(r.sustainedRatePerSec, 0);
  assert.ok(r.steps.length <= policy.maxSteps);
});
