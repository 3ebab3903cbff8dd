// `npm run measure:start`: the server's cold start, compiled against the TypeScript loader.
//
// For each way of running it, several runs, alternating (so a change in the machine's load hits
// both alike): start `serve` as production does (NODE_ENV=production, info logs to a file, the
// worker in process) on an already migrated SQLite file, poll GET /readyz every 5 ms from the
// spawn, and record
//   - start: spawn to the first 200 from /readyz (wall time: moves with the machine's load);
//   - CPU: the process's user + system time at that moment (/proc/<pid>/stat; much less
//     sensitive to load);
//   - RSS: the resident memory at that moment, and 2 s later (/proc/<pid>/status).
// Prints a table of medians (min-max) and one JSON line.
//
//   node scripts/measure-start.mjs [--runs 7]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const server = join(root, 'apps', 'server');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const RUNS = Number(values.runs);

const MODES = {
  'tsx (node --import tsx src/cli.ts)': ['--import', 'tsx', 'src/cli.ts'],
  'compiled (node --enable-source-maps dist/cli.js)': ['--enable-source-maps', 'dist/cli.js'],
  'compiled, no source maps (node dist/cli.js)': ['dist/cli.js'],
};

const built = spawnSync(process.execPath, ['scripts/ensure-built.mjs'], { cwd: server, stdio: 'inherit' });
if (built.status !== 0) process.exit(1);

const dir = mkdtempSync(join(tmpdir(), 'measure-start-'));
const databaseUrl = `sqlite:${join(dir, 'payments.db')}`;
const migrated = spawnSync(process.execPath, ['dist/cli.js', 'migrate'], { cwd: server, env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' });
if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);

const CLK_TCK = 100; // Linux USER_HZ
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK; // utime, stime
}
function rssMiB(pid) {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  return kb / 1024;
}
function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function once(args) {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [...args, 'serve'], {
    cwd: server,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production', PUBLIC_URL: `http://127.0.0.1:${port}`, HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: databaseUrl, LOG_FILE: join(dir, 'server.log'), LOG_LEVEL: 'info', SETTLEMENT_SCHEDULE: 'false' },
  });
  let exited = false;
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.once('exit', (code, signal) => { exited = true; stderr += `(exit code ${code}, signal ${signal})`; });
  try {
    for (;;) {
      if (exited) throw new Error(`${args.join(' ')} exited before /readyz answered:\n${stderr}`);
      if (performance.now() - t0 > 120_000) throw new Error('no /readyz in 120 s');
      try {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`);
        if (res.status === 200) break;
      } catch { /* not listening yet */ }
      await sleep(5);
    }
    const startMs = performance.now() - t0;
    const cpu = cpuMs(child.pid);
    const rss = rssMiB(child.pid);
    await sleep(2000);
    const rssLater = rssMiB(child.pid);
    return { startMs, cpuMs: cpu, rssMiB: rss, rss2sMiB: rssLater };
  } finally {
    const gone = new Promise((r) => (exited ? r() : child.once('exit', r)));
    child.kill('SIGTERM');
    await gone;
  }
}

const results = Object.fromEntries(Object.keys(MODES).map((m) => [m, []]));
const load = loadavg().map((v) => v.toFixed(1)).join(' / ');
for (let i = 0; i < RUNS; i++) {
  for (const [mode, args] of Object.entries(MODES)) {
    const r = await once(args);
    results[mode].push(r);
    process.stderr.write(`${mode}: run ${i + 1}/${RUNS}: ${Math.round(r.startMs)} ms, CPU ${Math.round(r.cpuMs)} ms, RSS ${r.rssMiB.toFixed(0)} MiB\n`);
  }
}
rmSync(dir, { recursive: true, force: true });

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const fmt = (xs, unit, digits = 0) => `${median(xs).toFixed(digits)} ${unit} (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})`;
console.log(`Node ${process.version}, ${cpus().length} cores, load average at the start ${load}; ${RUNS} runs each, medians (min-max)`);
console.log('| server started as | spawn to /readyz 200 | CPU at ready | RSS at ready | RSS 2 s later |');
console.log('|---|---|---|---|---|');
const summary = {};
for (const [mode, rs] of Object.entries(results)) {
  console.log(`| ${mode} | ${fmt(rs.map((r) => r.startMs), 'ms')} | ${fmt(rs.map((r) => r.cpuMs), 'ms')} | ${fmt(rs.map((r) => r.rssMiB), 'MiB')} | ${fmt(rs.map((r) => r.rss2sMiB), 'MiB')} |`);
  summary[mode] = { startMs: Math.round(median(rs.map((r) => r.startMs))), cpuMs: Math.round(median(rs.map((r) => r.cpuMs))), rssMiB: Math.round(median(rs.map((r) => r.rssMiB))) };
}
console.log(JSON.stringify({ node: process.version, runs: RUNS, summary }));
