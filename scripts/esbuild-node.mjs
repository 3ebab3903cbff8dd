// What the esbuild bundles that Node runs share: the server's dist/cli.js and its test bundles
// (apps/server/scripts/build.mjs), and the other workspaces' test bundles (scripts/bundle-tests.mjs).
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, join, relative, sep } from 'node:path';
import * as esbuild from 'esbuild';

// Node 20 is the oldest Node this project runs on (package.json "engines").
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  // Kept: errors print class names (ApiError, BenchFailure) and tests match on them.
  keepNames: true,
};

// Each module's `import.meta.url` as the URL of its source file, relative to the output folder,
// so relative paths from it (the server's dist/ of the back office, a test's screenshots folder,
// createRequire(import.meta.url)) mean what they meant in the source.
export function sourceUrlPlugin(outdir) {
  return {
    name: 'source-import-meta-url',
    setup(build) {
      // Our JavaScript too: an example's `import.meta.url === \`file://${process.argv[1]}\`` (is
      // this module the program?) must stay false when a test bundles it.
      build.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        const loader = /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js';
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return { contents: source, loader };
        const rel = relative(outdir, args.path).split(sep).join('/');
        const expr = `new URL(${JSON.stringify(rel)}, import.meta.url).href`;
        return { contents: source.replaceAll('import.meta.url', `(${expr})`), loader };
      });
    },
  };
}

// npm packages stay out of the bundle (native and optional ones must, and others read their own
// files at run time), imported by the absolute path esbuild resolves from the importing source
// file, as Node would resolve them from that file. A bare name would be resolved from the bundle's
// folder instead, and a workspace's own node_modules (apps/server/node_modules holds versions of
// @scalar and openapi-backend that differ from the root's) would be missed by the bundles of
// another workspace's tests that import the server's code.
export function packagesFromSourcePlugin() {
  const builtins = new Set(builtinModules);
  return {
    name: 'packages-from-source',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData?.fromSource) return undefined;
        if (args.path.startsWith('node:') || builtins.has(args.path)) return { path: args.path, external: true };
        const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { fromSource: true } });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        // A name that leads to our own code (a workspace, or tsconfig's `paths`: the SDK's
        // examples import 'pagamentos', its src/) is bundled like any of our files.
        if (!resolved.path.includes(`${sep}node_modules${sep}`)) return { path: resolved.path };
        return { path: resolved.path, external: true };
      });
    },
  };
}

// Writes to a temp folder and renames into place, so that a process starting (or a test
// spawning dist/cli.js) while another builds never reads half a file.
export async function buildInto(finalDir, options) {
  const tmp = `${finalDir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  await esbuild.build({ ...NODE_BUNDLE, ...options, outdir: tmp, plugins: [sourceUrlPlugin(finalDir), ...(options.plugins ?? [])] });
  mkdirSync(finalDir, { recursive: true });
  for (const name of readdirSync(tmp)) renameSync(join(tmp, name), join(finalDir, name));
  rmSync(tmp, { recursive: true, force: true });
}

// Bundles of test files deleted since the last build would still run under `node --test
// dist-test/*.test.js`: removes every file of outDir that is not an entry point's bundle or map.
export function removeStaleTestBundles(outDir, entryPoints) {
  const wanted = new Set(entryPoints.map((p) => basename(p).replace(/\.ts$/, '.js')));
  for (const name of readdirSync(outDir)) {
    if (!wanted.has(name.replace(/\.map$/, ''))) rmSync(join(outDir, name), { force: true });
  }
}
