// Builds the back office (dist/) when it is missing or older than its sources (see
// scripts/ensure-built.mjs at the repository root).
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../../../scripts/ensure-built.mjs';

process.exit(ensureBuilt({
  name: 'back office',
  root: dirname(dirname(fileURLToPath(import.meta.url))),
  built: 'dist/index.html',
  sources: ['src', 'public', 'index.html', 'vite.config.ts', 'package.json'],
  tool: 'vite',
  steps: [['<tool>/bin/vite.js', 'build', '--logLevel', 'warn']],
  unbuilt: '/backoffice',
}));
