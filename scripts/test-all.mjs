// `npm test` / `npm run test:pg` at the root: every workspace's suite, side by side.
//
//   node scripts/test-all.mjs [test|test:pg]
//   TEST_LANES=n    suites at a time (default 2, the cores of the machine this was measured on)
//   TEST_WORKSPACES=apps/server,bench   only these workspaces' suites
//
// The server's suite, the longest, starts first in a lane of its own; the other workspaces'
// suites share the other lane(s), longest first. Each suite's output is kept and printed whole
// when it ends, under a header with its time, so the logs of two suites never interleave; a line
// says when each starts. Exit 1 if any suite failed (all of them run anyway, as
// `npm run test --workspaces` did).
//
// Before the lanes start, what several suites use is built once (the server's dist/cli.js and
// dist-test/, the bench, the back office, the hosted checkout page and library), so no suite
// rebuilds a file another one is reading.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const script = process.argv[2] ?? 'test';
const lanes = Math.max(1, Number(process.env.TEST_LANES ?? Math.min(2, cpus().length)));

// The order the other lane takes them in: longest first (measured), so the lanes end together.
const ORDER = ['packages/sdk', 'apps/backoffice', 'sdks/php', 'apps/checkout-page', 'bench', 'packages/checkout'];
const LONGEST = 'apps/server';

const ensure = [
  ['apps/server/scripts/ensure-built.mjs', '--tests'],
  ['bench/scripts/ensure-built.mjs'],
  ['apps/backoffice/scripts/ensure-built.mjs'],
  ['apps/checkout-page/scripts/ensure-built.mjs'],
  ['packages/checkout/scripts/ensure-built.mjs'],
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
const suites = dirs.filter((dir) => {
  if (only && !only.includes(dir)) return false;
  const file = join(root, dir, 'package.json');
  return existsSync(file) && JSON.parse(readFileSync(file, 'utf8')).scripts?.[script];
});
const rank = (dir) => (dir === LONGEST ? -1 : ORDER.includes(dir) ? ORDER.indexOf(dir) : ORDER.length);
const queue = [...suites].sort((a, b) => rank(a) - rank(b));

const started = Date.now();
const secs = (ms) => `${Math.round(ms / 1000)} s`;
const results = [];

function runSuite(dir) {
  const t0 = Date.now();
  process.stdout.write(`-- ${dir}: ${script} started (${secs(t0 - started)} into the run)\n`);
  const child = spawn('npm', ['run', script], { cwd: join(root, dir), stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  const chunks = [];
  child.stdout.on('data', (d) => chunks.push(d));
  child.stderr.on('data', (d) => chunks.push(d));
  return new Promise((resolve) => child.on('close', (code, signal) => {
    const ok = code === 0;
    process.stdout.write(`\n==== ${dir}: npm run ${script} ${ok ? 'passed' : `FAILED (exit ${code ?? signal})`} in ${secs(Date.now() - t0)} ====\n`);
    process.stdout.write(Buffer.concat(chunks));
    process.stdout.write(`==== end of ${dir} ====\n\n`);
    results.push({ dir, ok, ms: Date.now() - t0 });
    resolve();
  }));
}

async function lane() {
  for (let dir = queue.shift(); dir; dir = queue.shift()) await runSuite(dir);
}
await Promise.all(Array.from({ length: Math.min(lanes, queue.length) }, lane));

process.stdout.write(`== ${script}: ${lanes} lane(s), ${secs(Date.now() - started)} in all ==\n`);
for (const r of results) process.stdout.write(`${r.ok ? 'ok    ' : 'FAILED'} ${secs(r.ms).padStart(6)}  ${r.dir}\n`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
