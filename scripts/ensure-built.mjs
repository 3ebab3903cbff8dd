// Builds a workspace when its build is missing or older than its sources, so that
// `npm install && npm start` on a fresh clone serves the back office, the hosted checkout page
// and /v1/checkout.js without a separate build step. Cheap when the build is fresh (a walk over
// the sources' modification times). Used by each workspace's scripts/ensure-built.mjs.
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

// root: the workspace folder; built: the file whose age stands for the build; sources: paths
// relative to root; tool: the package whose absence means "no dev dependencies, skip" (not
// fatal: the instance then answers 503 and says how to build); steps: [script, ...args] run
// with node in root, in order; quiet: say "building" on stderr, not stdout (a CLI's output).
export function ensureBuilt({ name, root, built, sources, tool, steps, unbuilt, quiet = false }) {
  const builtFile = join(root, built);
  const builtAt = existsSync(builtFile) ? statSync(builtFile).mtimeMs : -1;
  if (builtAt >= Math.max(...sources.map((p) => newest(join(root, p))))) return 0;
  let toolDir;
  try {
    toolDir = dirname(createRequire(join(root, 'package.json')).resolve(`${tool}/package.json`));
  } catch {
    process.stderr.write(`${name}: ${tool} is not installed (run \`npm install\` at the repository root), so ${unbuilt} cannot be built.\n`);
    return 0;
  }
  // Said before and after: on a fresh clone `npm install` spends most of its time here.
  const startedAt = Date.now();
  (quiet ? process.stderr : process.stdout).write(`${name}: building ${built.split('/')[0]}/ (${builtAt < 0 ? 'not built yet' : 'its sources changed'}; this can take a minute) …\n`);
  for (const [script, ...args] of steps) {
    const result = spawnSync(process.execPath, [script.replace('<tool>', toolDir), ...args], { cwd: root, stdio: quiet ? ['inherit', 2, 'inherit'] : 'inherit' });
    if (result.status !== 0) {
      // A failed step (e.g. the size budget) may leave a fresh `built` behind: date it back so
      // the next run builds again instead of taking the failed build as current.
      if (existsSync(builtFile)) utimesSync(builtFile, 0, 0);
      return result.status ?? 1;
    }
  }
  (quiet ? process.stderr : process.stdout).write(`${name}: built in ${((Date.now() - startedAt) / 1000).toFixed(1)} s\n`);
  return 0;
}
