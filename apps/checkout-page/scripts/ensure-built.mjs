// Builds the checkout page (dist/) when it is missing or older than its sources, so that
// `npm install && npm start` on a fresh clone serves it without a separate build step. Cheap when
// the build is fresh (a walk over the sources' modification times).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const built = join(root, 'dist', 'index.html');
const sources = ['src', 'index.html', 'vite.config.ts', 'package.json', '../../packages/checkout/src/protocol.ts'].map((p) => join(root, p));

function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const builtAt = existsSync(built) ? statSync(built).mtimeMs : -1;
if (builtAt >= Math.max(...sources.map(newest))) process.exit(0);

let vite;
try {
  vite = join(dirname(createRequire(join(root, 'package.json')).resolve('vite/package.json')), 'bin', 'vite.js');
} catch {
  process.stderr.write('checkout page: vite is not installed (run `npm install` at the repository root), so the hosted checkout page cannot be built.\n');
  // Not fatal: a production install without dev dependencies can still run the API (the
  // instance then answers /checkout/... with 503 and says how to build it).
  process.exit(0);
}
process.stdout.write('checkout page: building apps/checkout-page/dist …\n');
const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
if (result.status === 0) spawnSync(process.execPath, [join(root, 'scripts', 'size.mjs')], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
