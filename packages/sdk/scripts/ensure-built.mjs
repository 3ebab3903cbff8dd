// Builds the SDK (dist/) when it is missing or older than its sources (see
// scripts/ensure-built.mjs at the repository root). `npm test` used to run the whole build (tsc,
// the CommonJS bundle and its types: about 6 s) on every run; the package test builds it again
// anyway, from a copy without dist/, as `npm pack` does (test/package.test.ts).
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../../../scripts/ensure-built.mjs';

process.exit(ensureBuilt({
  name: 'pagamentos (SDK)',
  root: dirname(dirname(fileURLToPath(import.meta.url))),
  // Written last by scripts/build.mjs.
  built: 'dist/size.json',
  sources: ['src', 'scripts/build.mjs', 'package.json', 'tsconfig.build.json'],
  tool: 'typescript',
  steps: [['scripts/build.mjs']],
  unbuilt: 'dist/',
}));
