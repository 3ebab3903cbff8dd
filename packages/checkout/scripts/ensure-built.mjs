// Builds the library (dist/) when it is missing or older than its sources, so that
// `npm install && npm start` serves /v1/checkout.js without a separate build step.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const built = join(root, 'dist', 'checkout.global.js');
const sources = ['src', 'scripts', 'package.json'].map((p) => join(root, p));

function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const builtAt = existsSync(built) ? statSync(built).mtimeMs : -1;
if (builtAt >= Math.max(...sources.map(newest))) process.exit(0);
try {
  createRequire(join(root, 'package.json')).resolve('esbuild');
} catch {
  process.stderr.write('checkout library: esbuild is not installed (run `npm install` at the repository root), so /v1/checkout.js cannot be built.\n');
  process.exit(0);
}
process.stdout.write('checkout library: building packages/checkout/dist …\n');
const result = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
