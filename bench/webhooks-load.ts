// Event producer for bench/webhooks.ts: sends exactly `count` POSTs with autocannon from ITS
// OWN process (never the server's event loop), each with a fresh Idempotency-Key.
//
//   node bench/webhooks-load.ts <spec.json>
//
// spec: { url, path, headers, body, count, connections }
//
// Prints ONE JSON line to stdout: { startMs, endMs, durationS, completed, rps, p50Ms, p99Ms,
// maxMs, non2xx, errors, timeouts, statusCodes }. Anything else goes to stderr.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import autocannon, { type Result } from 'autocannon';

interface WebhooksLoadSpec { url: string; headers: Record<string, string>; body: string; connections: number; count: number; path: string }
const spec = JSON.parse(readFileSync(process.argv[2], 'utf8')) as WebhooksLoadSpec;
const prefix = `whbench-${process.pid}-${randomBytes(6).toString('hex')}-`;
let keySeq = 0;

const startMs = Date.now();
const result = await new Promise<Result>((resolve, reject) => {
  const instance = autocannon({
    url: spec.url,
    method: 'POST',
    headers: spec.headers,
    body: spec.body,
    connections: spec.connections,
    amount: spec.count,
    timeout: 30,
    requests: [{ setupRequest(req) { req.path = spec.path; req.headers['idempotency-key'] = prefix + keySeq++; return req; } }],
  }, (err, r) => (err ? reject(err) : resolve(r)));
  let shown = 0;
  instance.on('response', (_client, statusCode) => {
    if ((statusCode < 200 || statusCode > 299) && shown < 3) {
      shown++;
      process.stderr.write(`load: unexpected status ${statusCode} for POST ${spec.path}\n`);
    }
  });
  instance.on('reqError', (error) => {
    if (shown < 3) {
      shown++;
      process.stderr.write(`load: request error: ${error?.message ?? error}\n`);
    }
  });
});
const endMs = Date.now();
const durationS = (endMs - startMs) / 1000;
process.stdout.write(JSON.stringify({
  startMs, endMs, durationS,
  completed: result.requests.total,
  ok: result['2xx'],
  rps: durationS > 0 ? result.requests.total / durationS : 0,
  p50Ms: result.latency.p50, p99Ms: result.latency.p99, maxMs: result.latency.max,
  non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts,
  statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, v]) => [code, v.count])),
}) + '\n');
