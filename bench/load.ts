// Load-generator worker for bench/run.ts: runs autocannon in ITS OWN process, so the load
// generator never shares the event loop (or the CPU time accounting) of the server under test.
//
//   node bench/load.ts <spec.json>
//
// spec: { url, method, headers, body?, connections, warmupS, durationS,
//         idempotencyKeys?: boolean,   // a fresh Idempotency-Key header on every request
//         paths: string[] }            // cycled through, one per request
//
// Runs a warm-up (not reported as the measurement) and then the measured run, and prints ONE
// JSON line to stdout: { warmup: Summary, measured: Summary }. Anything else goes to stderr.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import autocannon, { type Request, type Result } from 'autocannon';

interface LoadSpec { url: string; method: string; headers: Record<string, string>; body?: string; connections: number; warmupS: number; durationS: number; idempotencyKeys?: boolean; paths: string[] }
const spec = JSON.parse(readFileSync(process.argv[2], 'utf8')) as LoadSpec;
if (!Array.isArray(spec.paths) || spec.paths.length === 0) throw new Error('spec.paths must be a non-empty array');

// Process-wide counters (every autocannon connection has its own request iterator, so the
// state must live out here to be unique / to cycle across all connections).
const prefix = `bench-${process.pid}-${randomBytes(6).toString('hex')}-`;
let keySeq = 0;
let pathSeq = 0;

function setupRequest(req: Request): Request {
  req.path = spec.paths[pathSeq++ % spec.paths.length];
  if (spec.idempotencyKeys) req.headers['idempotency-key'] = prefix + keySeq++;
  return req;
}

function run(durationS: number): Promise<Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon({
      url: spec.url,
      method: spec.method,
      headers: spec.headers,
      body: spec.body,
      connections: spec.connections,
      duration: durationS,
      timeout: 10,
      requests: [{ setupRequest }],
    }, (err, result) => (err ? reject(err) : resolve(result)));
    // Surface the first few unexpected statuses/errors to stderr, for diagnosis.
    let shown = 0;
    instance.on('response', (_client, statusCode) => {
      if ((statusCode < 200 || statusCode > 299) && shown < 3) {
        shown++;
        process.stderr.write(`load: unexpected status ${statusCode} for ${spec.method} ${spec.paths.length === 1 ? spec.paths[0] : spec.paths[0] + ' ...'}\n`);
      }
    });
    instance.on('reqError', (error) => {
      if (shown < 3) {
        shown++;
        process.stderr.write(`load: request error: ${error?.message ?? error}\n`);
      }
    });
  });
}

export interface Summary { durationS: number; completed: number; sent: number; rps: number; p50Ms: number; p99Ms: number; meanMs: number; maxMs: number; non2xx: number; errors: number; timeouts: number; statusCodes: Record<string, number> }
function summarize(r: Result): Summary {
  const completed = r.requests.total; // every response, whatever its status
  return {
    durationS: r.duration,
    completed,
    sent: r.requests.sent,
    rps: r.duration > 0 ? completed / r.duration : 0,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    meanMs: r.latency.average,
    maxMs: r.latency.max,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, v]) => [code, v.count])),
  };
}

const warmup = spec.warmupS > 0 ? summarize(await run(spec.warmupS)) : null;
const measured = summarize(await run(spec.durationS));
process.stdout.write(JSON.stringify({ warmup, measured }) + '\n');
