// Builds the server (apps/server/dist/cli.js) and the bench (dist/) when missing or older than
// their sources: the bench runs both compiled (see scripts/ensure-built.mjs at the repository root).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../../scripts/ensure-built.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const server = spawnSync(process.execPath, [join(root, '..', 'apps', 'server', 'scripts', 'ensure-built.mjs')], { stdio: 'inherit' });
if (server.status !== 0) process.exit(server.status ?? 1);
process.exit(ensureBuilt({
  name: 'bench',
  root,
  built: 'dist/run.js',
  sources: [...readdirSync(root).filter((n) => n.endsWith('.ts')), 'scripts/build.mjs', 'package.json'],
  tool: 'esbuild',
  steps: [['scripts/build.mjs']],
  unbuilt: 'bench/dist',
  quiet: true,
}));
