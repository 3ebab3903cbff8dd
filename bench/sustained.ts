// The sustained rate: the highest create rate at which the server both creates AND confirms
// card payments, found by an open-loop step search (core.ts runs the steps against a server).
//
// Why: a closed-loop create run measures how fast the API can take payments while the
// confirmations pile up behind it (70-80 % of them were still pending at the end of one). A
// latency target set at a fraction of THAT rate asks for a tail at a load the server cannot
// hold. The rates of the latency table are fractions of this one instead.
//
// A step sends POST /v1/payments open loop at one rate, and samples the confirmation backlog (the
// payments still pending) while it runs. After its warm-up the backlog of a rate the server holds
// stays level (the payments in flight, about rate x confirmation delay); at a rate it does not,
// the backlog grows for as long as the step lasts. A step PASSES when
//   - every request was answered 2xx,
//   - fewer than 1 % of the sends were late (more means the generator, not the server, was the
//     limit, and the step says nothing), and
//   - the backlog grew by at most the tolerance over the measured window: max(10, 2 % of the
//     requests the window sent) payments. (10 absorbs a confirmation batch in flight at either
//     end; 2 % is what a rate 2 % above the sustained one would leave.)
//
// The search: from a starting rate, up by `growth` while steps pass; once one fails, bisect
// between the highest pass and the lowest fail until they are within `resolution` of each other.
// If the first step fails it goes down by `growth` instead. At most `maxSteps` steps (a limit on
// everything): the answer is the highest rate that passed.

export interface StepOutcome {
  ratePerSec: number;
  /** Requests the measured window scheduled. */
  scheduled: number;
  lateSends: number;
  non2xx: number;
  errors: number;
  /** Pending payments at the start and at the end of the measured window. */
  backlogStart: number;
  backlogEnd: number;
}

export interface StepVerdict { pass: boolean; reason: string; toleranceCount: number }

export interface SearchPolicy {
  startRatePerSec: number;
  growth: number;
  resolution: number;
  maxSteps: number;
}

export interface SearchResult {
  /** The highest rate that passed; 0 when none did. */
  sustainedRatePerSec: number;
  /** The lowest rate that failed, or null if none did within maxSteps. */
  failedRatePerSec: number | null;
  steps: Array<StepOutcome & StepVerdict>;
}

export const LATE_FRACTION_MAX = 0.01;
export const BACKLOG_TOLERANCE_MIN = 10;
export const BACKLOG_TOLERANCE_FRACTION = 0.02;

export function judgeStep(o: StepOutcome): StepVerdict {
  const toleranceCount = Math.max(BACKLOG_TOLERANCE_MIN, Math.ceil(BACKLOG_TOLERANCE_FRACTION * o.scheduled));
  const growth = o.backlogEnd - o.backlogStart;
  if (o.non2xx > 0 || o.errors > 0) return { pass: false, reason: `${o.non2xx} non-2xx, ${o.errors} errors`, toleranceCount };
  if (o.scheduled > 0 && o.lateSends >= LATE_FRACTION_MAX * o.scheduled) return { pass: false, reason: `${o.lateSends} of ${o.scheduled} sends late (>= 1 %)`, toleranceCount };
  if (growth > toleranceCount) return { pass: false, reason: `backlog grew by ${growth} (${o.backlogStart} -> ${o.backlogEnd}), over the tolerance of ${toleranceCount}`, toleranceCount };
  return { pass: true, reason: `backlog ${o.backlogStart} -> ${o.backlogEnd} (tolerance +${toleranceCount})`, toleranceCount };
}

export async function findSustainedRate(runStep: (ratePerSec: number) => Promise<StepOutcome>, policy: SearchPolicy): Promise<SearchResult> {
  if (!(policy.startRatePerSec >= 1) || !(policy.growth > 1) || !(policy.resolution > 0) || !(policy.maxSteps >= 1)) {
    throw new Error(`findSustainedRate: bad policy ${JSON.stringify(policy)}`);
  }
  const steps: SearchResult['steps'] = [];
  let passed: number | null = null;
  let failed: number | null = null;
  let rate = Math.round(policy.startRatePerSec);
  while (steps.length < policy.maxSteps) {
    const outcome = await runStep(rate);
    const verdict = judgeStep(outcome);
    steps.push({ ...outcome, ...verdict });
    if (verdict.pass) passed = Math.max(passed ?? 0, rate);
    else failed = Math.min(failed ?? Infinity, rate);
    let next: number;
    if (passed === null) next = Math.floor(rate / policy.growth); // nothing held yet: go down
    else if (failed === null) next = Math.ceil(rate * policy.growth); // nothing failed yet: go up
    else if ((failed - passed) / passed <= policy.resolution) break;
    else next = Math.round((passed + failed) / 2);
    if (next < 1 || next === rate || (passed !== null && next <= passed) || (failed !== null && next >= failed)) break;
    rate = next;
  }
  return { sustainedRatePerSec: passed ?? 0, failedRatePerSec: failed, steps };
}
