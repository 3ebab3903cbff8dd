// Builds the server (dist/cli.js) when it is missing or older than its sources, so that
// `npm start`, `npm run cli` and the bench always run the compiled server of the code as it is
// (see scripts/ensure-built.mjs at the repository root). Prints only when it builds, on stderr,
// so `npm run cli -- ...` output stays the command's own.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../../../scripts/ensure-built.mjs';

const tests = process.argv.includes('--tests');
process.exit(ensureBuilt({
  name: 'server',
  root: dirname(dirname(fileURLToPath(import.meta.url))),
  // With --tests, dist-test/ (the bundled test files) is built too, and its age is checked.
  built: tests ? 'dist-test/.built' : 'dist/cli.js',
  sources: tests ? ['src', 'test', 'scripts/build.mjs', 'package.json'] : ['src', 'scripts/build.mjs', 'package.json'],
  tool: 'esbuild',
  steps: [tests ? ['scripts/build.mjs', '--tests'] : ['scripts/build.mjs']],
  unbuilt: 'dist/cli.js',
  quiet: true,
}));
