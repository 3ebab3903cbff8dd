// Load-generator worker for the split-approval scenario of bench/settlement.ts: runs autocannon
// in ITS OWN process (never in the server's, nor in the orchestrator's).
//
//   node bench/split-load.ts <spec.json>
//
// spec: { url, method, headers, body?, connections,
//         amount,              // exactly this many requests, then stop (no duration)
//         paths: string[],     // request k goes to paths[k]: each path is used at most once
//         collectIds?: string  // a file: the `id` of every 200 response body, one per line
//       }
//
// Each request takes the next path of the list, process-wide (every autocannon connection has its
// own request iterator, so the counter lives out here): with `amount` <= paths.length no path
// is ever sent twice, which is what makes "pay a pending payment" repeatable under load.
// Prints ONE JSON line to stdout: the run's summary. Anything else goes to stderr.
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import autocannon, { type Request, type Result } from 'autocannon';

interface SplitLoadSpec { url: string; method: string; headers: Record<string, string>; body?: string; connections: number; amount: number; paths: string[]; collectIds?: string }
const spec = JSON.parse(readFileSync(process.argv[2], 'utf8')) as SplitLoadSpec;
if (!Array.isArray(spec.paths) || spec.paths.length === 0) throw new Error('spec.paths must be a non-empty array');
if (!(spec.amount > 0)) throw new Error('spec.amount must be positive');
if (spec.paths.length > 1 && spec.amount > spec.paths.length) throw new Error(`spec.amount ${spec.amount} exceeds the ${spec.paths.length} distinct paths`);

let pathSeq = 0;
let reused = 0;
const ids: string[] = [];

function setupRequest(req: Request): Request {
  const k = pathSeq++;
  if (spec.paths.length > 1 && k >= spec.paths.length) reused++;
  req.path = spec.paths[k % spec.paths.length];
  return req;
}

function onResponse(status: number, body: string): void {
  if (spec.collectIds && status === 200) {
    try { ids.push(JSON.parse(body).id); } catch { /* counted as missing below */ }
  }
}

// autocannon reports only at its next 1-second tick, so its own duration rounds a fixed-amount
// run up to whole seconds; the run's time here is first request -> last response.
let lastResponseAt = 0;
const startedAt = performance.now();
const result = await new Promise<Result>((resolve, reject) => {
  const instance = autocannon({
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    body: spec.body,
    connections: spec.connections,
    amount: spec.amount,
    timeout: 10,
    requests: [{ setupRequest, ...(spec.collectIds ? { onResponse } : {}) }],
  }, (err, r) => (err ? reject(err) : resolve(r)));
  let shown = 0;
  instance.on('response', (client, statusCode, _bytes, _ms) => {
    lastResponseAt = performance.now();
    if ((statusCode < 200 || statusCode > 299) && shown < 3) {
      shown++;
      process.stderr.write(`split-load: unexpected status ${statusCode} for ${spec.method} ${client?.opts?.path ?? ''}\n`);
    }
  });
  instance.on('reqError', (error) => {
    if (shown < 3) {
      shown++;
      process.stderr.write(`split-load: request error: ${error?.message ?? error}\n`);
    }
  });
});

if (spec.collectIds) writeFileSync(spec.collectIds, ids.join('\n') + '\n');

const completed = result.requests.total;
const seconds = lastResponseAt > startedAt ? (lastResponseAt - startedAt) / 1000 : result.duration;
process.stdout.write(JSON.stringify({
  seconds,
  completed,
  sent: result.requests.sent,
  rps: seconds > 0 ? completed / seconds : 0,
  p50Ms: result.latency.p50,
  p99Ms: result.latency.p99,
  meanMs: result.latency.average,
  maxMs: result.latency.max,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  reusedPaths: reused,
  collected: spec.collectIds ? ids.length : undefined,
  statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, v]) => [code, v.count])),
}) + '\n');
