// The server's test runner (`npm test -w apps/server`, `npm run test:pg -w apps/server`): runs
// every test/*.test.ts compiled, with plain `node --test`, instead of under tsx.
//
// Why: under tsx each test file's process spent about 2-4 s of CPU compiling and loading the app's
// TypeScript before its first test (3.7 s on Node 20), and the suite has over 40 files. Here
// scripts/build.mjs --tests bundles each test file with the src/ it imports into dist-test/ (one
// esbuild run for all of them, about a second of CPU; skipped when nothing changed), and the CLI
// the tests spawn is the compiled dist/cli.js too (test/cli.ts). Stack traces name the
// TypeScript lines (source maps).
//
//   node scripts/test.mjs [test/foo.test.ts ...]   the named files only (default: all)
//   TEST_CONCURRENCY=n                             test files at a time (default 2, the cores here)
//   TEST_SKIP_BUILD=1                              dist-test/ is built already (scripts/test-all.mjs)
//   TEST_FROM_SOURCE=1                             every file from test/ under tsx, as before
//                                                  (`npm run coverage` measures the bundles: their
//                                                  source maps lead c8 back to src/)
//
// A file that imports TypeScript at run time (generated-client.test.ts type-checks and then
// imports a client it generates as .ts) runs from source under tsx, alongside the others.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
// Files that need a TypeScript loader in their own process (see above).
const UNDER_TSX = new Set(['generated-client.test.ts']);
const fromSourceOnly = process.env.TEST_FROM_SOURCE === '1';

// TEST_SKIP_BUILD=1: the caller built already (scripts/test-all.mjs, which runs the files one by one).
if (process.env.TEST_SKIP_BUILD !== '1') {
  const built = spawnSync(process.execPath, [join(root, 'scripts', 'ensure-built.mjs'), ...(fromSourceOnly ? [] : ['--tests'])], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

const asked = process.argv.slice(2).map((p) => basename(p).replace(/\.js$/, '.ts'));
const all = readdirSync(join(root, 'test')).filter((n) => n.endsWith('.test.ts')).sort();
for (const name of asked) if (!all.includes(name)) throw new Error(`no test file test/${name}`);
const files = asked.length ? asked : all;
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const common = ['--test', '--test-timeout=300000', `--test-concurrency=${concurrency}`];

// buffered: the output is printed when the run ends, not interleaved with the other run's.
function run(args, buffered = false) {
  const child = spawn(process.execPath, args, { cwd: root, stdio: buffered ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  const chunks = [];
  if (buffered) for (const stream of [child.stdout, child.stderr]) stream.on('data', (d) => chunks.push(d));
  return new Promise((resolve) => child.on('exit', (code, signal) => {
    if (buffered) process.stdout.write(Buffer.concat(chunks));
    resolve(code ?? (signal ? 1 : 0));
  }));
}

const underTsx = (n) => fromSourceOnly || UNDER_TSX.has(n);
const compiled = files.filter((n) => !underTsx(n)).map((n) => join('dist-test', n.replace(/\.ts$/, '.js')));
const fromSource = files.filter(underTsx).map((n) => join('test', n));
// The tsx files run beside the compiled ones (one extra process while they last).
const codes = await Promise.all([
  compiled.length ? run(['--enable-source-maps', ...common, ...compiled]) : 0,
  fromSource.length ? run(['--import', 'tsx', ...common, ...fromSource], compiled.length > 0) : 0,
]);
process.exit(codes.find((c) => c !== 0) ?? 0);
