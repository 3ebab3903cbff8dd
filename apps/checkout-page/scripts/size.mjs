// Measures what a buyer downloads for the hosted checkout page (index.html + every JS and CSS
// file of the build, gzipped), writes dist/size.json and fails the build above the budget.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET_GZIP_BYTES = 30 * 1024;
const dist = join(dirname(dirname(fileURLToPath(import.meta.url))), 'dist');
const files = ['index.html', ...readdirSync(join(dist, 'assets')).filter((f) => /\.(js|css)$/.test(f)).map((f) => `assets/${f}`)];
const measured = files.map((file) => {
  const body = readFileSync(join(dist, file));
  return { file, bytes: body.length, gzipBytes: gzipSync(body, { level: 9 }).length };
});
const jsCss = measured.filter((f) => f.file !== 'index.html');
const size = {
  budgetGzipBytes: BUDGET_GZIP_BYTES,
  jsCssGzipBytes: jsCss.reduce((n, f) => n + f.gzipBytes, 0),
  totalGzipBytes: measured.reduce((n, f) => n + f.gzipBytes, 0),
  files: measured,
};
writeFileSync(join(dist, 'size.json'), JSON.stringify(size, null, 2) + '\n');
process.stdout.write(`checkout page: JS + CSS ${size.jsCssGzipBytes} B gzipped (budget ${BUDGET_GZIP_BYTES} B); with index.html ${size.totalGzipBytes} B\n`);
if (size.jsCssGzipBytes > BUDGET_GZIP_BYTES) {
  process.stderr.write('checkout page: over its size budget\n');
  process.exit(1);
}
