// Builds the library (dist/) when it is missing or older than its sources (see
// scripts/ensure-built.mjs at the repository root), so /v1/checkout.js is served.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../../../scripts/ensure-built.mjs';

process.exit(ensureBuilt({
  name: 'checkout library',
  root: dirname(dirname(fileURLToPath(import.meta.url))),
  built: 'dist/checkout.global.js',
  sources: ['src', 'scripts', 'package.json'],
  tool: 'esbuild',
  steps: [['scripts/build.mjs']],
  unbuilt: '/v1/checkout.js',
}));
