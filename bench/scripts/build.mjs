// Compiles the bench to JavaScript: each top-level *.ts (the runner run.ts, the load generators
// and webhook receivers it starts as processes, the ceiling plugin the server loads) to dist/*.js,
// bundled with what it imports of ours (npm packages stay external), with source maps. `npm run
// bench` runs dist/run.js with plain node, and lib.ts starts the compiled server
// (apps/server/dist/cli.js) and the compiled scripts, as production runs them.
import { readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const tmp = `${dist}.tmp-${process.pid}`;
const entryPoints = readdirSync(root).filter((n) => n.endsWith('.ts')).map((n) => join(root, n));

rmSync(tmp, { recursive: true, force: true });
await esbuild.build({
  entryPoints,
  outdir: tmp,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  keepNames: true,
  logLevel: 'warning',
});
// Renamed into place: a bench started while this builds never reads half a file.
rmSync(dist, { recursive: true, force: true });
renameSync(tmp, dist);
process.stderr.write(`bench: built dist/ (${entryPoints.length} files)\n`);
