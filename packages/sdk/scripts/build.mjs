// Builds dist/ from src/ as committed (src/generated/openapi.ts included: `npm run generate`
// refreshes it from the server): ESM (tsc, one module per file, with .d.ts), CommonJS (one esbuild bundle whose
// require() is the client class itself, with every named export on it, and .d.ts that say so),
// and measures the full bundle minified and gzipped (dist/size.json).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import * as esbuild from 'esbuild';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const require = createRequire(import.meta.url);

rmSync(dist, { recursive: true, force: true });

// ESM: what bundlers tree-shake, module by module.
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

// CommonJS: `require('pagamentos')` is the Pagamentos class, carrying every named export
// (PagamentosError, verifyWebhook, ...) and `default`, so `const Pagamentos = require('pagamentos')`,
// `const { Pagamentos } = require(...)` and TypeScript's default import all work.
const cjs = join(dist, 'cjs');
await esbuild.build({
  stdin: {
    contents: `const sdk = require('./index.js');
module.exports = Object.assign(sdk.Pagamentos, sdk, { default: sdk.Pagamentos });
Object.defineProperty(module.exports, '__esModule', { value: true });`,
    resolveDir: join(dist, 'esm'),
    loader: 'js',
  },
  bundle: true,
  format: 'cjs',
  platform: 'neutral',
  target: 'es2022',
  outfile: join(cjs, 'index.js'),
  logLevel: 'warning',
});
writeFileSync(join(cjs, 'package.json'), JSON.stringify({ type: 'commonjs' }) + '\n');

// Its types: the same declarations, read as CommonJS (dist/cjs/package.json), under an
// `export =` of the class merged with a namespace that re-exports every named export.
cpSync(join(dist, 'esm'), join(cjs, 'types'), { recursive: true, filter: (src) => statSync(src).isDirectory() || src.endsWith('.d.ts') });
const program = ts.createProgram([join(dist, 'esm', 'index.d.ts')], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext });
const checker = program.getTypeChecker();
const entry = checker.getSymbolAtLocation(program.getSourceFile(join(dist, 'esm', 'index.d.ts')));
// Values (classes, functions, constants) are import aliases; types are type aliases, since an
// import alias cannot name a type-only export. A generic type-only export would need its
// parameters written out: refuse it here rather than ship broken CommonJS types.
const lines = checker.getExportsOfModule(entry).filter((s) => s.getName() !== 'default').sort((a, b) => a.getName().localeCompare(b.getName())).map((s) => {
  const name = s.getName();
  const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
  if (target.flags & ts.SymbolFlags.Value) return `  export import ${name} = sdk.${name};`;
  if (target.declarations?.some((d) => d.typeParameters?.length)) throw new Error(`${name}: a generic type-only export cannot be re-exported in the CommonJS types`);
  return `  export type ${name} = sdk.${name};`;
});
writeFileSync(join(cjs, 'index.d.ts'), `// CommonJS view of the package: require('pagamentos') is the client class with every export on it.
import * as sdk from './types/index.js';
declare class Pagamentos extends sdk.Pagamentos {}
declare namespace Pagamentos {
${lines.join('\n')}
}
export = Pagamentos;
`);

// Size of everything (the client, its resources, webhooks), minified and gzipped, as a
// merchant's bundler would ship it.
const bundle = await esbuild.build({
  entryPoints: [join(dist, 'esm', 'index.js')],
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  write: false,
});
const code = bundle.outputFiles[0].contents;
const size = { minifiedBytes: code.length, gzippedBytes: gzipSync(code, { level: 9 }).length };
writeFileSync(join(dist, 'size.json'), JSON.stringify(size) + '\n');
const files = readdirSync(join(dist, 'esm')).length;
console.log(`pagamentos: dist/esm (${files} entries), dist/cjs; full bundle ${(size.minifiedBytes / 1024).toFixed(1)} KB minified, ${(size.gzippedBytes / 1024).toFixed(1)} KB gzipped`);
mkdirSync(dist, { recursive: true });
