// `npm run bench` (= `npm run -w bench bench` = `node --import tsx bench/run.ts`): the one runner
// of the bench's suites, in this order, each in this process (the servers, the load generators
// and the webhook receivers each run in processes of their own):
//
//   core         the payments API against its own ceiling: throughput (closed loop) and latency
//                (open loop), SQLite and, with BENCH_DATABASE_URL, PostgreSQL (core.ts)
//   marketplace  1,000,000 receivables settled in one run; the cost of a three-recipient split
//                (settlement.ts)
//   webhooks     20,000 events fanned out to four receivers, one slow (webhooks.ts)
//
// BENCH_SUITES=core,marketplace,webhooks picks some (default: all three). Each suite prints its
// tables as it goes (stdout; progress on stderr); the JSON lines of every suite come together at
// the very end, the core suite's last, so `npm run bench | tail -n 1` is the core JSON line of the
// last engine. Exit 1 when any suite failed (a non-2xx, a crash, a failed verification).
//
// The figures and how to read them: docs/performance.md.
import { BenchFailure, errorText, installCleanup, makeLog, type SuiteOutcome } from './lib.ts';
import { runCore } from './core.ts';
import { runMarketplace } from './settlement.ts';
import { runWebhooks } from './webhooks.ts';

const SUITES: Record<string, () => Promise<SuiteOutcome>> = { core: runCore, marketplace: runMarketplace, webhooks: runWebhooks };

const log = makeLog('bench');
installCleanup(log);

async function main(): Promise<void> {
  const wanted = (process.env.BENCH_SUITES || 'core,marketplace,webhooks').split(',').map((x) => x.trim()).filter(Boolean);
  for (const x of wanted) if (!(x in SUITES)) throw new BenchFailure(`BENCH_SUITES: unknown suite "${x}" (${Object.keys(SUITES).join(', ')})`);
  const order = Object.keys(SUITES).filter((x) => wanted.includes(x));
  const lines: Record<string, string[]> = {};
  let failed = false;
  for (const suite of order) {
    log(`== suite ${suite} ==`);
    try {
      const outcome = await SUITES[suite]();
      lines[suite] = outcome.jsonLines;
      if (outcome.failed) failed = true;
    } catch (error) {
      failed = true;
      process.stdout.write(`== suite ${suite}: FAILED ==\n${errorText(error)}\n\n`);
    }
  }
  const all = [...order.filter((s) => s !== 'core'), ...order.filter((s) => s === 'core')].flatMap((s) => lines[s] ?? []);
  if (all.length) process.stdout.write(all.join('\n') + '\n');
  process.exitCode = failed ? 1 : 0;
}

main().catch((error: unknown) => {
  process.stdout.write(`bench failed: ${errorText(error)}\n`);
  process.exit(1); // the exit handler kills the children and removes the temp dirs
});
