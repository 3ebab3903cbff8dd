// The bench measures the server from outside, as a client would: it starts `cli.ts` as a process
// and talks to it over HTTP (and to its database with SQL). Importing the server's code would
// make it measure, or depend on, something other than what ships; this scan keeps that out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { BENCH_DIR, SERVER_DIR } from '../lib.ts';

const FORBIDDEN = [join(SERVER_DIR, 'src'), join(SERVER_DIR, 'test')];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules') return [];
    const path = join(dir, e.name);
    return e.isDirectory() ? tsFiles(path) : e.name.endsWith('.ts') ? [path] : [];
  });
}

// Every module specifier of a file: static imports and re-exports (`import`/`export ... from`,
// `import type` too), side-effect imports, dynamic `import()` and `require()`.
const SPECIFIER = /\bfrom\s*['"]([^'"]+)['"]|\bimport\s*['"]([^'"]+)['"]|\b(?:import|require)\s*\(\s*['"`]([^'"`]+)['"`]/g;
function specifiers(text: string): string[] {
  return [...text.matchAll(SPECIFIER)].map((m) => m[1] ?? m[2] ?? m[3]);
}

test('no bench file imports from apps/server/src or apps/server/test', () => {
  const files = tsFiles(BENCH_DIR);
  assert.ok(files.length > 10, `found only ${files.length} bench .ts files: the scan looks in the wrong place`);
  const offending: string[] = [];
  for (const file of files) {
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      // Relative or absolute paths only: a package name (fastify, pg) is no file of the server's.
      if (!spec.startsWith('.') && !spec.startsWith('/')) continue;
      const target = resolve(dirname(file), spec);
      if (FORBIDDEN.some((dir) => target === dir || target.startsWith(dir + sep))) offending.push(`${relative(BENCH_DIR, file)}: '${spec}'`);
    }
  }
  assert.deepEqual(offending, [], 'the bench talks to the server over HTTP and the CLI, and keeps its own helpers (lib.ts)');
});

test('the scan sees every form an import takes', () => {
  const text = [
    "import { a } from '../x.ts';",
    "import type { B } from \"../y.ts\";",
    "export { c } from '../z.ts';",
    "import '../side.ts';",
    "const d = await import('../dyn.ts');",
    'const e = require(`../req.ts`);',
  ].join('\n');
  assert.deepEqual(specifiers(text), ['../x.ts', '../y.ts', '../z.ts', '../side.ts', '../dyn.ts', '../req.ts']);
});
