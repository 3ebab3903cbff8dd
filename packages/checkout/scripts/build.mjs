// Builds the library: dist/index.js (ESM) + dist/*.d.ts (types), and dist/checkout.global.js
// (IIFE defining window.PagamentosCheckout, served by the instance at /v1/checkout.js). Then
// measures the script-tag build gzipped, writes dist/size.json and fails above the budget.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = join(root, 'dist');
const BUDGET_GZIP_BYTES = 5 * 1024;

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
const common = { entryPoints: [join(root, 'src/index.ts')], bundle: true, target: 'es2020', legalComments: 'none', logLevel: 'warning' };
await build({ ...common, format: 'esm', outfile: join(dist, 'index.js') });
await build({ ...common, format: 'iife', globalName: 'PagamentosCheckout', minify: true, outfile: join(dist, 'checkout.global.js') });

const tsc = join(dirname(createRequire(join(root, 'package.json')).resolve('typescript/package.json')), 'bin', 'tsc');
const types = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (types.status !== 0) process.exit(types.status ?? 1);

const measure = (file) => {
  const body = readFileSync(join(dist, file));
  return { file, bytes: body.length, gzipBytes: gzipSync(body, { level: 9 }).length };
};
const size = { budgetGzipBytes: BUDGET_GZIP_BYTES, script: measure('checkout.global.js'), esm: measure('index.js') };
writeFileSync(join(dist, 'size.json'), JSON.stringify(size, null, 2) + '\n');
process.stdout.write(`checkout library: checkout.global.js ${size.script.bytes} B, ${size.script.gzipBytes} B gzipped (budget ${BUDGET_GZIP_BYTES} B); index.js ${size.esm.gzipBytes} B gzipped\n`);
if (size.script.gzipBytes > BUDGET_GZIP_BYTES) {
  process.stderr.write('checkout library: over its size budget\n');
  process.exit(1);
}
