// Builds the hosted checkout page (dist/) when it is missing or older than its sources (see
// scripts/ensure-built.mjs at the repository root), then measures it.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../../../scripts/ensure-built.mjs';

process.exit(ensureBuilt({
  name: 'checkout page',
  root: dirname(dirname(fileURLToPath(import.meta.url))),
  built: 'dist/index.html',
  sources: ['src', 'index.html', 'vite.config.ts', 'package.json', '../../packages/checkout/src/protocol.ts', '../server/src/domain/card.ts'],
  tool: 'vite',
  steps: [['<tool>/bin/vite.js', 'build', '--logLevel', 'warn'], ['scripts/size.mjs']],
  unbuilt: 'the hosted checkout page (/checkout/…)',
}));
