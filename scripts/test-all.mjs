// `npm test` / `npm run test:pg` at the root: every workspace's suite, side by side.
//
//   node scripts/test-all.mjs [test|test:pg]
//   TEST_LANES=n    jobs at a time (default 4: the 2 cores of the machine this was measured on,
//                   plus two, since the browser, PHP and many server tests wait part of the time;
//                   on 2026-11-29 a quiet machine ran `npm test` in 198 s with 4 lanes against
//                   209 s with 3, and the jobs used 326 and 336 s of CPU: docs/performance.md)
//   TEST_WORKSPACES=apps/server,bench   only these workspaces' suites
//   TEST_DRY_RUN=1  prints the jobs in the order they would start, with their expected seconds
//
// The jobs: each other workspace's suite whole, and each of the server's test files on its own
// (its suite is the longest, about half of all the work: as one job it set the run's end alone).
// They run longest first (the times of the last run on this checkout, kept in
// node_modules/.cache/pagamentos-test-times.json; else the measured defaults below, and a server
// file's share of its suite by size), each starting when a lane frees, so the lanes end together.
// Each job's output is kept and printed whole when it ends, under a header with its time, so the
// logs of two jobs never interleave; a line says when each starts. Exit 1 if any failed (all of
// them run anyway, as `npm run test --workspaces` did).
//
// Before the lanes start, what several suites use is built once (the server's dist/cli.js and
// dist-test/, the bench, the back office, the hosted checkout page and library, the SDK), so no suite
// rebuilds a file another one is reading.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const script = process.argv[2] ?? 'test';
const lanes = Math.max(1, Number(process.env.TEST_LANES ?? 4));

// Wall seconds of each suite in a CI run of 2026-11-28 (the server's: its files' sum, two at a
// time on 218 s), for a checkout without times of its own.
const DEFAULT_SECONDS = { 'apps/server': 436, 'packages/sdk': 117, 'apps/backoffice': 53, 'apps/checkout-page': 50, 'sdks/php': 36, bench: 10, 'packages/checkout': 9 };
const SERVER = 'apps/server';
// The server's own runner, which takes test files one by one (apps/server/scripts/test.mjs).
const SERVER_RUNNER = 'node scripts/test.mjs';
const TIMES = join(root, 'node_modules', '.cache', 'pagamentos-test-times.json');

const ensure = [
  ['apps/server/scripts/ensure-built.mjs', '--tests'],
  ['bench/scripts/ensure-built.mjs'],
  ['apps/backoffice/scripts/ensure-built.mjs'],
  ['apps/checkout-page/scripts/ensure-built.mjs'],
  ['packages/checkout/scripts/ensure-built.mjs'],
  ['packages/sdk/scripts/ensure-built.mjs'],
];
for (const [file, ...args] of ensure) {
  const r = spawnSync(process.execPath, [join(root, file), ...args], { cwd: dirname(dirname(join(root, file))), stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const { workspaces } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const dirs = [];
for (const pattern of workspaces) {
  if (!pattern.endsWith('/*')) { dirs.push(pattern); continue; }
  const base = pattern.slice(0, -2);
  for (const name of readdirSync(join(root, base)).sort()) dirs.push(`${base}/${name}`);
}
const only = process.env.TEST_WORKSPACES ? process.env.TEST_WORKSPACES.split(',') : null;
const scriptOf = (dir) => {
  const file = join(root, dir, 'package.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).scripts?.[script] : undefined;
};
const suites = dirs.filter((dir) => (!only || only.includes(dir)) && scriptOf(dir));

let times = {};
try { times = JSON.parse(readFileSync(TIMES, 'utf8')); } catch { /* first run on this checkout */ }

// A job: a name, the command, where, and how long it is expected to take.
const jobs = [];
for (const dir of suites) {
  if (dir === SERVER && scriptOf(dir) === SERVER_RUNNER) {
    const testDir = join(root, dir, 'test');
    const files = readdirSync(testDir).filter((n) => n.endsWith('.test.ts')).sort();
    const sizes = files.map((n) => statSync(join(testDir, n)).size);
    const total = sizes.reduce((a, b) => a + b, 0);
    files.forEach((n, i) => {
      const name = `${dir}/test/${n}`;
      // The build is done above; one file at a time (the lanes are the concurrency).
      jobs.push({ name, dir, suite: dir, cmd: ['node', ['scripts/test.mjs', `test/${n}`]], env: { TEST_SKIP_BUILD: '1', TEST_CONCURRENCY: '1' }, expect: times[name] ?? (DEFAULT_SECONDS[dir] * sizes[i]) / total });
    });
  } else {
    jobs.push({ name: dir, dir, suite: dir, cmd: ['npm', ['run', script]], env: {}, expect: times[dir] ?? DEFAULT_SECONDS[dir] ?? 0 });
  }
}
const queue = jobs.sort((a, b) => b.expect - a.expect);
if (process.env.TEST_DRY_RUN === '1') {
  for (const job of queue) process.stdout.write(`${job.expect.toFixed(1).padStart(7)} s  ${job.name}  (${job.cmd.flat().join(' ')})\n`);
  process.exit(0);
}

const started = Date.now();
const secs = (ms) => `${Math.round(ms / 1000)} s`;
const results = [];

// CPU seconds (user + system) of the jobs, to tell how far lanes can go on this machine: the
// kernel adds a child's CPU, and its reaped descendants', to our cutime/cstime when it is reaped,
// so the growth between two reaps is the job just reaped. Linux only (elsewhere: not shown).
const TICKS_PER_S = 100; // USER_HZ, 100 on every Linux that Node supports
function childrenCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_S; // cutime, cstime (fields 16, 17)
  } catch { return null; }
}
let cpuSeen = childrenCpuSeconds();

function run(job) {
  const t0 = Date.now();
  process.stdout.write(`-- ${job.name}: ${script} started (${secs(t0 - started)} into the run)\n`);
  const child = spawn(job.cmd[0], job.cmd[1], { cwd: join(root, job.dir), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...job.env } });
  const chunks = [];
  child.stdout.on('data', (d) => chunks.push(d));
  child.stderr.on('data', (d) => chunks.push(d));
  return new Promise((resolve) => child.on('close', (code, signal) => {
    const cpuNow = childrenCpuSeconds();
    const cpu = cpuNow === null || cpuSeen === null ? null : cpuNow - cpuSeen;
    cpuSeen = cpuNow;
    const ok = code === 0;
    const what = job.name === job.dir ? `npm run ${script}` : script;
    process.stdout.write(`\n==== ${job.name}: ${what} ${ok ? 'passed' : `FAILED (exit ${code ?? signal})`} in ${secs(Date.now() - t0)}${cpu === null ? '' : `, ${Math.round(cpu)} s of CPU`} ====\n`);
    process.stdout.write(Buffer.concat(chunks));
    process.stdout.write(`==== end of ${job.name} ====\n\n`);
    results.push({ ...job, ok, ms: Date.now() - t0, cpu, end: Date.now() - started });
    resolve();
  }));
}

async function lane() {
  for (let job = queue.shift(); job; job = queue.shift()) await run(job);
}
await Promise.all(Array.from({ length: Math.min(lanes, queue.length) }, lane));

// Kept for the next run's order (only the jobs that passed: a failure's time says little).
const next = { ...times };
for (const r of results) if (r.ok) next[r.name] = Math.round(r.ms / 100) / 10;
try {
  mkdirSync(dirname(TIMES), { recursive: true });
  writeFileSync(TIMES, JSON.stringify(next, null, 1) + '\n');
} catch { /* a read-only node_modules: the next run orders by the defaults */ }

const cpuAll = results.every((r) => r.cpu !== null) ? results.reduce((n, r) => n + r.cpu, 0) : null;
process.stdout.write(`== ${script}: ${lanes} lane(s), ${secs(Date.now() - started)} in all${cpuAll === null ? '' : `; the jobs used ${Math.round(cpuAll)} s of CPU (${os.availableParallelism()} cores: no fewer than ${Math.round(cpuAll / os.availableParallelism())} s of wall time)`} ==\n`);
// Per workspace: its jobs' summed time and when its last job ended; the failed jobs by name.
for (const suite of [...new Set(results.map((r) => r.suite))]) {
  const mine = results.filter((r) => r.suite === suite);
  const failed = mine.filter((r) => !r.ok);
  const sum = mine.reduce((n, r) => n + r.ms, 0);
  const cpu = mine.every((r) => r.cpu !== null) ? `${secs(mine.reduce((n, r) => n + r.cpu, 0) * 1000).padStart(6)} CPU  ` : '';
  const detail = mine.length > 1 ? `  (${mine.length} files, their times summed; the last ended ${secs(Math.max(...mine.map((r) => r.end)))} into the run)` : '';
  process.stdout.write(`${failed.length ? 'FAILED' : 'ok    '} ${secs(sum).padStart(6)}  ${cpu}${suite}${detail}\n`);
  for (const f of failed) process.stdout.write(`         FAILED: ${f.name}\n`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
