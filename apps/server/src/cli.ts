import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkServeConfig, loadConfig, type Config } from './config.js';
import { Store } from './store/index.js';
// The app (Fastify, its plugins, the API reference, the worker) is imported only by the commands
// that run it, `serve` and `worker`: the one-shot commands (keys, accounts, admins, audit)
// start without loading it (the build splits it into its own chunk).
import type { ServerPlugin } from './app.js';
import { pathToFileURL } from 'node:url';
import { hostname, userInfo } from 'node:os';
import { createAccount, createKey, findKey, revokeKey } from './modules/accounts/service.js';
import { activateLiveModeFromCommandLine } from './modules/admin/accounts/service.js';
import { systemClock } from './clock.js';
import { createAdminUser } from './modules/admin/index.js';
import { audit, formatAudit } from './modules/audit.js';
import { newMasterKey } from './providers/secrets/envelope.js';
import { rewrapAll } from './providers/secrets/rewrap.js';
import { readAdminPassword } from './cli-password.js';

const USAGE = `Usage: npm run cli -- <command>

  serve [--plugin FILE]                  run the API (and, by default, the worker) on PORT
                                         (--plugin: extra routes from a module, as the bench's ceiling)
  worker                                 run only background jobs (production: one or more)
  migrate                                apply pending migrations and exit
  accounts:create --name N [--email E]   create a merchant account with sandbox keys
  accounts:activate-live <acct_id> --reason R --admin E
                                         allow the account's live keys; as the admin API does, it
                                         needs a reason and writes an audit row, with E (the email
                                         of an admin user) as who did it
  keys:create <acct_id> [--live] [--publishable]
  keys:revoke <key_id | key>
  admin:create --email E [--role admin|viewer]
                                         create a back-office user (admin: manages; viewer: reads only);
                                         the password is asked for (not shown) or read from standard
                                         input (printf '%s' "$P" | ...); --password P works but warns
  audit                                  check the money invariants over the whole store (exit 1 on failure)
  keys:new --id ID                       print a new master key for MASTER_KEYS (ID:base64 of 32 random bytes)
  keys:rewrap                            rewrap every connector account's secrets with the first key of
                                         MASTER_KEYS (after putting a new key first; see docs/providers.md)

Configuration comes from the environment (see README): DATABASE_URL, PORT, HOST, LOG_LEVEL, ...`;

// The system user and machine running a command, for the audit log's user agent.
function whoRuns(): string {
  let user = process.env.USER ?? 'unknown user';
  try {
    user = userInfo().username;
  } catch { /* no passwd entry (a container's arbitrary uid): the environment's */ }
  return `${user}@${hostname()}`;
}

function openStore(config: Config): Store {
  return Store.open({ url: config.databaseUrl, writeBatchMax: config.writeBatchMax, writeQueueMaxPending: config.writeQueueMaxPending, pgWriters: config.pgWriters, pgPoolSize: config.pgWriters + 16, clock: systemClock });
}

function describeDb(url: string): string {
  return url.startsWith('sqlite:') ? url : url.replace(/\/\/[^@]*@/, '//***@');
}

interface SandboxKeys {
  accountId: string;
  secretKey: string;
  publishableKey: string;
}

// Sandbox keys for the person who just ran `npm start` (the secret key for their server, the
// publishable one for the browser): made once, kept in the data folder beside the embedded store
// so every start prints the same ones.
async function localSandboxKeys(store: Store, config: Config): Promise<SandboxKeys> {
  const file = config.databaseUrl.startsWith('sqlite:')
    ? resolve(dirname(resolve(config.databaseUrl.slice('sqlite:'.length))), 'sandbox-key.json')
    : resolve('data', 'sandbox-key.json');
  const save = (keys: SandboxKeys) => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(keys, null, 2) + '\n', { mode: 0o600 });
    return keys;
  };
  if (existsSync(file)) {
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Partial<SandboxKeys>;
      const secret = saved.secretKey ? await findKey(store, saved.secretKey) : null;
      if (secret && saved.secretKey) {
        // A file from before publishable keys were printed, or a revoked one: a fresh one.
        if (saved.publishableKey && (await findKey(store, saved.publishableKey))) return saved as SandboxKeys;
        const publishable = await createKey(store, secret.accountId, 'publishable', false);
        return save({ accountId: secret.accountId, secretKey: saved.secretKey, publishableKey: publishable.key });
      }
    } catch { /* unreadable or stale: make new ones */ }
  }
  const created = await createAccount(store, { name: 'Local sandbox merchant' });
  return save({ accountId: created.account.id, secretKey: created.keys.secretKey.key, publishableKey: created.keys.publishableKey.key });
}

// `serve --plugin FILE`: a module whose default export adds routes to the app (ServerPlugin in
// app.ts). For the bench's ceiling routes; nothing in the product needs one.
async function loadPlugins(files: string[]): Promise<ServerPlugin[]> {
  const plugins: ServerPlugin[] = [];
  for (const file of files) {
    const module = (await import(pathToFileURL(resolve(file)).href)) as { default?: unknown };
    if (typeof module.default !== 'function') throw new Error(`--plugin ${file}: its default export must be a function (app) => void`);
    plugins.push(module.default as ServerPlugin);
  }
  return plugins;
}

async function serve(config: Config, pluginFiles: string[]): Promise<void> {
  checkServeConfig(config);
  const plugins = await loadPlugins(pluginFiles);
  const store = openStore(config);
  await store.migrate();
  const { buildApp } = await import('./app.js');
  const built = await buildApp({ config, store, plugins, clock: systemClock });
  if (pluginFiles.length) built.app.log.info({ plugins: pluginFiles }, 'serving with extra routes from --plugin');
  const address = await built.app.listen({ port: config.port, host: config.host });
  await built.startWorker();
  const base = config.publicUrl ?? address.replace('[::1]', 'localhost').replace('127.0.0.1', 'localhost');
  const lines = [
    `Payments API listening on ${base} (store: ${describeDb(config.databaseUrl)}${store.sqliteDriver ? ` via ${store.sqliteDriver}` : ''}, worker: ${config.workerInProcess ? 'in process' : 'separate'})`,
    `API reference: ${base}/v1/docs   OpenAPI: ${base}/v1/openapi.json`,
    `Back office: ${base}/backoffice/   (users: npm run cli -- admin:create --email you@example.com [--role viewer])`,
  ];
  if (process.env.PRINT_SANDBOX_KEY !== 'false' && process.env.NODE_ENV !== 'production') {
    const keys = await localSandboxKeys(store, config);
    // One space after the colon: scripts read these lines (sdks/php's TestServer does).
    lines.push(`Sandbox secret key: ${keys.secretKey}   (your server: every /v1 call)`);
    lines.push(`Sandbox publishable key: ${keys.publishableKey}   (the browser: card tokens on your own pages)`);
    lines.push(`Try: curl -s ${base}/v1/payments -H "Authorization: Bearer ${keys.secretKey}" -H "Content-Type: application/json" -d '{"amount":1050,"currency":"BRL","method":"pix"}'`);
  }
  process.stdout.write(lines.join('\n') + '\n');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    built.app.log.info({ signal }, 'shutting down: finishing in-flight requests and jobs');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    await built.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

async function worker(config: Config): Promise<void> {
  const store = openStore(config);
  await store.migrate();
  const [{ createDispatcher, createLogger, createWorker }, { takeDeliveriesCreated }, { SandboxProvider }, { CircuitBreaker }, { ConnectorRegistry }, { cardOutcome }] = await Promise.all([
    import('./app.js'), import('./modules/events/service.js'), import('./providers/sandbox.js'), import('./providers/breaker.js'), import('./providers/registry.js'), import('./modules/payments/service.js'),
  ]);
  const log = createLogger(config);
  const provider = new SandboxProvider(store, (token) => cardOutcome(store, token));
  const breaker = new CircuitBreaker(config.providerBreakerFailures, config.providerBreakerCooldownMs, store.clock);
  const connectors = new ConnectorRegistry(config.masterKeys, store.clock);
  const w = createWorker(store, config, { store, config, provider, kickWorker: () => {}, breaker, connectors, clock: store.clock }, log);
  await w.start();
  const dispatcher = createDispatcher(store, config, log);
  store.onCommit(() => {
    if (takeDeliveriesCreated()) dispatcher.kick();
  });
  dispatcher.start();
  log.info({ workerId: w.id, dispatcherId: dispatcher.id }, 'worker started');
  const stop = async () => {
    await w.stop();
    await dispatcher.stop();
    await store.close();
    log.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' }, role: { type: 'string' }, live: { type: 'boolean' }, publishable: { type: 'boolean' },
      plugin: { type: 'string', multiple: true }, reason: { type: 'string' }, admin: { type: 'string' }, id: { type: 'string' },
    },
  });
  const config = loadConfig();
  switch (command) {
    case 'serve': return serve(config, values.plugin ?? []);
    case 'worker': return worker(config);
    case 'keys:new': {
      if (!values.id) throw new Error('usage: keys:new --id ID (e.g. --id k2026a: letters, digits, _ or -)');
      process.stdout.write(newMasterKey(values.id) + '\n');
      return;
    }
    case undefined: case 'help': case '--help':
      process.stdout.write(USAGE + '\n');
      return;
  }
  const store = openStore(config);
  try {
    await store.migrate();
    switch (command) {
      case 'migrate': {
        process.stdout.write(`migrations up to date (${describeDb(config.databaseUrl)})\n`);
        break;
      }
      case 'accounts:create': {
        if (!values.name) throw new Error('--name is required');
        const created = await createAccount(store, { name: values.name, email: values.email ?? null });
        process.stdout.write(JSON.stringify({ account: created.account, secretKey: created.keys.secretKey.key, publishableKey: created.keys.publishableKey.key }, null, 2) + '\n');
        break;
      }
      case 'accounts:activate-live': {
        if (!positionals[0] || values.reason === undefined || values.admin === undefined) {
          throw new Error('usage: accounts:activate-live <acct_id> --reason R --admin E (R: why, for the audit log; E: the email of an admin user)');
        }
        const { account, auditEntryId } = await activateLiveModeFromCommandLine(store, positionals[0], { adminEmail: values.admin, reason: values.reason, where: `npm run cli -- accounts:activate-live (${whoRuns()})` });
        process.stdout.write(`live mode activated for ${account.id} (audit log entry ${auditEntryId})\n`);
        break;
      }
      case 'keys:create': {
        if (!positionals[0]) throw new Error('usage: keys:create <acct_id> [--live] [--publishable]');
        const key = await createKey(store, positionals[0], values.publishable ? 'publishable' : 'secret', Boolean(values.live));
        process.stdout.write(JSON.stringify({ id: key.id, key: key.key }, null, 2) + '\n');
        break;
      }
      case 'keys:revoke': {
        if (!positionals[0]) throw new Error('usage: keys:revoke <key_id | key>');
        const revoked = await revokeKey(store, positionals[0]);
        process.stdout.write(`revoked ${revoked.id} (${revoked.display})\n`);
        break;
      }
      case 'admin:create': {
        if (!values.email) throw new Error('usage: admin:create --email E [--role admin|viewer]   (the password: asked for, or on standard input)');
        const password = await readAdminPassword(values.password, { stdin: process.stdin, stderr: process.stderr });
        const admin = await createAdminUser(store, values.email, password, (values.role ?? 'admin') as 'admin');
        process.stdout.write(`${admin.role} ${admin.email} created (${admin.id})\n`);
        break;
      }
      case 'audit': {
        const report = await audit(store);
        process.stdout.write(formatAudit(report) + '\n');
        if (!report.ok) process.exitCode = 1;
        break;
      }
      case 'keys:rewrap': {
        if (!config.masterKeys) throw new Error('MASTER_KEYS is not set: put the new key first and keep the old one listed, then run keys:rewrap');
        const { rewrapped, current } = await rewrapAll(store, config.masterKeys);
        process.stdout.write(`${rewrapped} connector account(s) rewrapped with ${config.masterKeys.current.id}; ${current} already were\n`);
        break;
      }
      default:
        throw new Error(`unknown command "${command}"\n\n${USAGE}`);
    }
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
