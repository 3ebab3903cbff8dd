import { mkdtempSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { api, createBenchSchema, runLoadScript, startCli, stopCli, installCleanup } from './lib.ts';
installCleanup(console.error);
const tmp = mkdtempSync('/tmp/i14b-proftmp-');
const prof = process.env.PROF_DIR!;
mkdirSync(prof, { recursive: true });
const schema = await createBenchSchema('postgres://postgres@127.0.0.1:5432/test', 'i14bprof');
try {
  const server = await startCli('serve', { env: { DATABASE_URL: schema.databaseUrl, WORKER_IN_PROCESS: 'false' }, logFile: join(tmp, 's.log'), nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${prof}`] });
  const worker = await startCli('worker', { env: { DATABASE_URL: schema.databaseUrl }, logFile: join(tmp, 'w.log') });
  const signup = await api(server, 'POST', '/v1/sandbox/accounts', { body: { name: 'p' } });
  const key = signup.json.keys.secretKey.key;
  const body = JSON.stringify({ amountInCents: 2500, method: 'credit_card', cardToken: 'tok_visa' });
  const r = await runLoadScript([server, worker], tmp, 'load.ts', 'post', { url: server.base, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body, idempotencyKeys: true, paths: ['/v1/payments'], connections: 64, warmupS: 2, durationS: Number(process.env.DUR ?? 15) });
  console.log(JSON.stringify(r.measured));
  await stopCli(server); await stopCli(worker);
} finally { await schema.drop(); }
