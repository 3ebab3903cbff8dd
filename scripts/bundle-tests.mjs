// Bundles a workspace's test files for plain `node --test`: test/*.test.ts -> dist-test/*.test.js
// (gitignored), each with what it imports of ours (its own src/, the server's src/ and test
// helpers), the npm packages left out and imported from where the source would import them.
//
//   node ../../scripts/bundle-tests.mjs        run in the workspace (its test script does)
//
// Why: the SDK's, the back office's and the hosted page's test files start the server in their
// own process, from its TypeScript. Under tsx each file paid the compile of the server's source
// and of its own before its first test (the server's own test files stopped doing that with
// apps/server/scripts/test.mjs). esbuild bundles them all in about a second. Stack traces name the
// TypeScript lines (source maps, `node --enable-source-maps`).
//
// Without tree shaking, as the server's test bundles: code a bundle left out would count as run
// in the coverage of a run (scripts/coverage.mjs).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildInto, packagesFromSourcePlugin, removeStaleTestBundles } from './esbuild-node.mjs';

const workspace = process.cwd();
const testDir = join(workspace, 'test');
const outDir = join(workspace, 'dist-test');
const started = performance.now();
const entryPoints = readdirSync(testDir).filter((n) => n.endsWith('.test.ts')).map((n) => join(testDir, n));
await buildInto(outDir, { entryPoints, treeShaking: false, plugins: [packagesFromSourcePlugin()] });
removeStaleTestBundles(outDir, entryPoints);
process.stdout.write(`bundled ${entryPoints.length} test files into dist-test/ in ${Math.round(performance.now() - started)} ms\n`);
