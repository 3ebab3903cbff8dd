// `npm run coverage`: line and branch coverage of each workspace's own code, by its tests.
//
//   node scripts/coverage.mjs [--no-run] [--check]
//     (no flag)  runs the suites of the workspaces below as `npm test` runs them
//                (scripts/test-all.mjs: the server's test files compiled) with NODE_V8_COVERAGE
//                set, so every Node process they start writes V8's coverage, then reports
//     --no-run   reports from coverage/v8 of earlier runs: CI sets NODE_V8_COVERAGE to
//                coverage/v8 for the two test runs it does anyway (`npm test` on Node 20, SQLite;
//                the Node 24 run, SQLite and PostgreSQL) and reports their union, instead of a
//                third run of its own
//     --check    also compares the line coverage of each file changed since main with the
//                committed scripts/coverage-baseline.json, and fails when one lost more than
//                1 point (CI runs this)
//     --write-baseline   writes scripts/coverage-baseline.json from this run
//
// Coverage is V8's, mapped back to the TypeScript through the source maps, read by c8 with
// --exclude-after-remap: the server's and the SDK's test files run as esbuild bundles
// (apps/server/dist-test/, packages/sdk/dist-test/: scripts/bundle-tests.mjs), built without tree
// shaking for this: code a bundle left out would count as run, since v8-to-istanbul counts a line
// as run unless a range says otherwise; the bench's under tsx. Before c8 reads them, the coverage files are pruned to the repository's own scripts
// (node_modules and Node's internals out, which c8 would otherwise remap and drop one by one).
// The production bundles (*/dist/, e.g. the compiled CLI some tests spawn) are left out: they
// are tree-shaken, so their unused code would count as run. What runs in a browser (the back
// office, the hosted checkout page, the checkout library) or in PHP is not seen by V8 in Node:
// those rows say so. Writes coverage/summary.json and coverage/summary.md (the README's table).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = new Set(process.argv.slice(2));
const v8Dir = join(root, 'coverage', 'v8');
const BASELINE = join(root, 'scripts', 'coverage-baseline.json');
// A file may lose this many points of line coverage before --check fails (runs differ a little:
// timers, retries, which process wins a race).
const TOLERANCE = 1;

// Each workspace whose code Node runs: where its code is, relative to the repository.
const WORKSPACES = [
  { name: 'apps/server', include: ['apps/server/src/**/*.ts'] },
  { name: 'packages/sdk', include: ['packages/sdk/src/**/*.ts'], exclude: ['packages/sdk/src/generated/**'] },
  { name: 'bench', include: ['bench/*.ts'] },
];
const NOT_MEASURED = {
  'apps/backoffice': 'runs in the browser (Chromium), not measured',
  'apps/checkout-page': 'runs in the browser (Chromium), not measured',
  'packages/checkout': 'runs in the browser (Chromium), not measured',
  'sdks/php': 'PHP (no coverage driver, Xdebug or PCOV, installed), not measured',
};

let rc = 0;
if (!args.has('--no-run')) {
  rmSync(join(root, 'coverage'), { recursive: true, force: true });
  mkdirSync(v8Dir, { recursive: true });
  const started = Date.now();
  const env = { ...process.env, NODE_V8_COVERAGE: v8Dir, TEST_WORKSPACES: WORKSPACES.map((w) => w.name).join(',') };
  const run = spawnSync(process.execPath, [join(root, 'scripts', 'test-all.mjs'), 'test'], { cwd: root, stdio: 'inherit', env });
  rc = run.status ?? 1;
  process.stdout.write(`coverage: the suites ran in ${Math.round((Date.now() - started) / 1000)} s (exit ${rc})\n`);
}
if (!existsSync(v8Dir)) throw new Error('no coverage/v8: run `npm run coverage` first');

// Keeps, of each process's coverage, the scripts of this repository that are not in node_modules
// nor a production bundle (*/dist/), with their source maps.
const pruneStarted = Date.now();
const ownPrefix = `file://${root}/`;
const own = (url) => url.startsWith(ownPrefix) && !url.includes('/node_modules/') && !url.includes('/dist/');
// esbuild wraps a module that is imported lazily somewhere in the bundle (a test's
// `await import('../src/...')`) in an init function named after the module's path, holding its
// top-level statements. Its whole range maps from the module's first line to its last, so once
// it has run it would mark every line of the module as run, the functions nobody called too.
// Without that outer range the module reads as one that is not wrapped: its top-level lines as
// run, its functions by their own counts. (An init that never ran keeps it: nothing of it ran.)
function unwrapModuleInit(fn) {
  if (!/\/[^/]+\.[cm]?tsx?$/.test(fn.functionName) || !(fn.ranges[0]?.count > 0)) return [fn];
  return fn.ranges.length > 1 ? [{ ...fn, ranges: fn.ranges.slice(1) }] : [];
}
let processes = 0;
let scripts = 0;
for (const name of readdirSync(v8Dir)) {
  if (!name.endsWith('.json')) continue;
  const file = join(v8Dir, name);
  const cov = JSON.parse(readFileSync(file, 'utf8'));
  const result = (cov.result ?? []).filter((s) => own(s.url));
  for (const script of result) script.functions = script.functions.flatMap(unwrapModuleInit);
  const maps = Object.fromEntries(Object.entries(cov['source-map-cache'] ?? {}).filter(([url]) => own(url)));
  // Node's cache names a map's sources by file URL; v8-to-istanbul hands those names to c8's
  // --include test as they are, which matches paths only (with URLs every remapped range was
  // dropped, and every line of a bundle's sources counted as run).
  for (const map of Object.values(maps)) {
    if (map.data?.sources) map.data.sources = map.data.sources.map((s) => (s.startsWith('file://') ? fileURLToPath(s) : s));
  }
  if (!result.length) { rmSync(file); continue; }
  processes++;
  scripts += result.length;
  writeFileSync(file, JSON.stringify({ result, 'source-map-cache': maps }));
}
process.stdout.write(`coverage: ${processes} processes ran code of ours (${scripts} scripts), pruned in ${Math.round((Date.now() - pruneStarted) / 1000)} s\n`);

const c8 = join(root, 'node_modules', 'c8', 'bin', 'c8.js');
// One c8 report for every workspace (each bundle is remapped once), split per workspace here.
const out = join(root, 'coverage', 'report');
const reportStarted = Date.now();
const r = spawnSync(process.execPath, [
  c8, 'report', '--temp-directory', v8Dir, '--report-dir', out, '--reporter', 'json-summary',
  '--all', '--src', root, '--exclude-node-modules', '--exclude-after-remap',
  ...WORKSPACES.flatMap((ws) => ws.include.flatMap((p) => ['--include', p])),
  ...WORKSPACES.flatMap((ws) => (ws.exclude ?? []).flatMap((p) => ['--exclude', p])),
], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
if (r.status !== 0) throw new Error('c8 report failed');
process.stdout.write(`coverage: c8 report in ${Math.round((Date.now() - reportStarted) / 1000)} s\n`);
const summary = JSON.parse(readFileSync(join(out, 'coverage-summary.json'), 'utf8'));
const pct = (covered, total) => (total === 0 ? 100 : Math.round((covered / total) * 10000) / 100);
const rows = [];
const files = {};
for (const ws of WORKSPACES) {
  const prefix = `${ws.name}/`;
  const mine = Object.entries(summary).filter(([file]) => file !== 'total' && relative(root, file).startsWith(prefix));
  const sum = (key, field) => mine.reduce((n, [, s]) => n + s[key][field], 0);
  rows.push({ name: ws.name, lines: pct(sum('lines', 'covered'), sum('lines', 'total')), branches: pct(sum('branches', 'covered'), sum('branches', 'total')), files: mine.length });
  for (const [file, s] of mine) files[relative(root, file)] = { lines: s.lines.pct, branches: s.branches.pct };
}

const table = ['| Workspace | Lines | Branches | Files |', '|---|---|---|---|'];
for (const r of rows) table.push(`| ${r.name} | ${r.lines.toFixed(1)} % | ${r.branches.toFixed(1)} % | ${r.files} |`);
for (const [name, why] of Object.entries(NOT_MEASURED)) table.push(`| ${name} | - | - | ${why} |`);
writeFileSync(join(root, 'coverage', 'summary.json'), JSON.stringify({ workspaces: rows, files }, null, 1) + '\n');
writeFileSync(join(root, 'coverage', 'summary.md'), table.join('\n') + '\n');
process.stdout.write(`\n${table.join('\n')}\n`);

if (args.has('--write-baseline')) {
  writeFileSync(BASELINE, JSON.stringify(Object.fromEntries(Object.entries(files).sort().map(([f, s]) => [f, s.lines])), null, 1) + '\n');
  process.stdout.write(`coverage: wrote ${relative(root, BASELINE)} (${Object.keys(files).length} files)\n`);
}

if (args.has('--check')) {
  const baseline = existsSync(BASELINE) ? JSON.parse(readFileSync(BASELINE, 'utf8')) : {};
  // Files changed since main (or, on main itself, since the previous commit): the ones a drop
  // is flagged for.
  const base = spawnSync('git', ['merge-base', 'HEAD', 'main'], { cwd: root, encoding: 'utf8' }).stdout.trim();
  const range = base && base !== spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim() ? base : 'HEAD~1';
  const changed = spawnSync('git', ['diff', '--name-only', range], { cwd: root, encoding: 'utf8' }).stdout.split('\n').filter((f) => f in files);
  const drops = [];
  for (const file of changed) {
    const before = baseline[file];
    const now = files[file].lines;
    if (before === undefined) process.stdout.write(`coverage: ${file}: ${now.toFixed(1)} % of lines (new file, no baseline)\n`);
    else if (now < before - TOLERANCE) drops.push(`${file}: ${before.toFixed(1)} % -> ${now.toFixed(1)} % of lines`);
    else process.stdout.write(`coverage: ${file}: ${now.toFixed(1)} % of lines (baseline ${before.toFixed(1)} %)\n`);
  }
  if (drops.length) {
    process.stdout.write(`\nCOVERAGE DROPPED in ${drops.length} changed file(s) (against ${relative(root, BASELINE)}; more than ${TOLERANCE} point):\n${drops.map((d) => `  ${d}`).join('\n')}\n`);
    rc ||= 1;
  } else {
    process.stdout.write(`coverage: no changed file lost more than ${TOLERANCE} point of line coverage (${changed.length} changed files checked)\n`);
  }
}
process.exit(rc);
