// Compiles the server and its CLI to JavaScript: dist/cli.js, an esbuild bundle of src/ split in
// chunks (dist/chunk-*.js, each with its .map: the app, which only `serve` and `worker` load, is
// one), which production, `npm start` and the bench run with plain `node` (no TypeScript loader:
// docs/performance.md has the cold start and memory, before and after).
//
//   node scripts/build.mjs            dist/cli.js
//   node scripts/build.mjs --tests    also dist-test/*.test.js: each test file bundled with the
//                                     src/ it imports, so `node --test` runs the suite without
//                                     tsx (see scripts/test.mjs); never committed (.gitignore)
//
// The npm packages stay external (imported from node_modules as they are): native and optional
// ones (better-sqlite3, pg's pg-native) must, and the others (Fastify, pino, Scalar) read their
// own files at run time. Only our TypeScript is compiled.
//
// `import.meta.url` keeps meaning "this source file": src/ finds the back office's and the
// hosted page's dist/ relative to its own file (modules/backoffice.ts, modules/checkout/pages.ts)
// and sqlite.ts resolves better-sqlite3 from it. In the bundle, each module's import.meta.url is
// rewritten to its source file's URL, computed from the bundle's own location at run time, so the
// same relative paths work from dist/ (and from a copy of the repository elsewhere, as long as
// dist/ stays next to src/).
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildInto, removeStaleTestBundles } from '../../../scripts/esbuild-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const withTests = process.argv.includes('--tests');

// The bundles live in this workspace, so npm packages stay bare names, resolved from here.
const packages = 'external';

const started = performance.now();
// Split: what only `serve` and `worker` import dynamically (the app) is a chunk of its own, so
// the CLI's one-shot commands start without loading Fastify and the rest. Chunks of an earlier
// build are removed first (their names carry a hash).
for (const name of existsSync(join(root, 'dist')) ? readdirSync(join(root, 'dist')) : []) {
  if (name.startsWith('chunk-')) rmSync(join(root, 'dist', name), { force: true });
}
await buildInto(join(root, 'dist'), { packages, entryPoints: [join(root, 'src', 'cli.ts')], splitting: true, chunkNames: 'chunk-[hash]' });
let built = 'dist/cli.js';
if (withTests) {
  const testDir = join(root, 'test');
  const entryPoints = readdirSync(testDir).filter((n) => n.endsWith('.test.ts')).map((n) => join(testDir, n));
  // One bundle per test file (each runs in its own process, as `node --test` does); shared code
  // is not split into chunks, so a file's bundle is all it loads of ours.
  // Without tree shaking: a bundle keeps the code of ours its test does not use, so that the
  // coverage of a run (scripts/coverage.mjs) counts that code as not run; v8-to-istanbul would
  // count a line left out of the bundle as run.
  await buildInto(join(root, 'dist-test'), { packages, entryPoints, treeShaking: false });
  removeStaleTestBundles(join(root, 'dist-test'), entryPoints);
  built += ` and dist-test/ (${entryPoints.length} test files)`;
  // What scripts/ensure-built.mjs --tests dates the test build by.
  writeFileSync(join(root, 'dist-test', '.built'), new Date().toISOString() + '\n');
}
const size = statSync(join(root, 'dist', 'cli.js')).size;
process.stdout.write(`server: built ${built} in ${Math.round(performance.now() - started)} ms (cli.js ${(size / 1024).toFixed(0)} KiB)\n`);
