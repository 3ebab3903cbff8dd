// `npm run test:clients`: what docs/other-languages.md tells a merchant to do, for real. Starts
// the server (embedded store, a fresh database), takes /v1/openapi.json and /v1/openapi-3.0.json
// from it, generates the Java client (openapi-generator-plus, 3.1), the Python client and the C#
// models (OpenAPI Generator 5, the jar inside @openapitools/openapi-generator-cli@1.0.18-5.0.0-beta2,
// 3.0), compiles the Java and C# with Debian's javac and mcs, and runs each language's program
// against the server. Needs: java/javac (JDK 17), mono-mcs, Debian's Jackson, JAX-RS, RESTEasy and
// Newtonsoft.Json, python3 with urllib3, dateutil and six (.ci/run installs them). Prints each
// step's time; exits non-zero on the first failure.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const build = join(here, 'build');
const require = createRequire(import.meta.url);
const only = process.argv.slice(2); // e.g. `npm run test:clients -- java`
const wants = (lang) => only.length === 0 || only.includes(lang);
const JARS = '/usr/share/java';
const ADMIN = { email: 'ops@example.com', password: 'correct horse battery staple' };

const started = Date.now();
const times = [];
async function step(name, fn) {
  const t0 = Date.now();
  console.log(`\n== ${name}`);
  const value = await fn();
  times.push([name, Date.now() - t0]);
  return value;
}
function run(cmd, args, options = {}) {
  const res = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options, env: { ...process.env, ...options.env } });
  if (res.error) throw res.error;
  if (res.status !== 0) throw new Error(`${cmd} ${args.slice(0, 3).join(' ')} ... exited ${res.status}`);
}
const files = (dir, ext) => readdirSync(dir).flatMap((name) => {
  const path = join(dir, name);
  return statSync(path).isDirectory() ? files(path, ext) : path.endsWith(ext) ? [path] : [];
});
// The guide's Java is the example's: every line of each ```java block of docs/other-languages.md
// (comments aside) is a line of Main.java, in the same order.
function guideJavaIsMain() {
  const code = (text) => text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('//'));
  const main = code(readFileSync(join(here, 'java/src/example/Main.java'), 'utf8'));
  const blocks = [...readFileSync(join(root, 'docs/other-languages.md'), 'utf8').matchAll(/```java\n([\s\S]*?)```/g)].map((m) => code(m[1]));
  if (blocks.length === 0) throw new Error('docs/other-languages.md has no Java block');
  for (const block of blocks) {
    let at = 0;
    for (const line of block) {
      at = main.indexOf(line, at) + 1;
      if (at === 0) throw new Error(`docs/other-languages.md shows Java that Main.java does not run (or not in this order): ${line}`);
    }
  }
  console.log(`${blocks.length} Java blocks of docs/other-languages.md, ${blocks.flat().length} lines, are Main.java's`);
}
const freePort = () => new Promise((res, rej) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => res(port)); }).on('error', rej);
});

rmSync(build, { recursive: true, force: true });
mkdirSync(build, { recursive: true });
const port = await freePort();
const base = `http://localhost:${port}`;
const serverEnv = { DATABASE_URL: `sqlite:${join(build, 'server.db')}`, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', PRINT_SANDBOX_KEY: 'false', NODE_ENV: 'development' };
// The compiled CLI, as production runs it (built here when missing or older than src/: a walk
// over modification times when CI's test run built it already); under tsx each of the three
// processes started on about 1.9 s of CPU more (docs/performance.md, cold start), taken from the
// test run beside this one in CI.
run(process.execPath, ['scripts/ensure-built.mjs'], { cwd: join(root, 'apps/server') });
const CLI = ['--enable-source-maps', 'dist/cli.js'];
const cli = (args, env = {}) => run(process.execPath, [...CLI, ...args], { cwd: join(root, 'apps/server'), env: { ...serverEnv, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });

let server;
const stop = () => { if (server && server.exitCode === null) server.kill('SIGTERM'); };
process.on('exit', stop);
try {
  await step('server: migrate, an admin user, serve', async () => {
    cli(['migrate']);
    cli(['admin:create', '--email', ADMIN.email, '--password', ADMIN.password]);
    server = spawn(process.execPath, [...CLI, 'serve'], { cwd: join(root, 'apps/server'), env: { ...process.env, ...serverEnv }, stdio: ['ignore', 'inherit', 'inherit'] });
    for (let i = 0; i < 600; i++) {
      if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode})`);
      try { if ((await fetch(`${base}/v1/openapi.json`)).ok) return; } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the server did not answer in 60 s');
  });
  await step('documents: /v1/openapi.json (3.1) and /v1/openapi-3.0.json', async () => {
    for (const [url, file] of [['/v1/openapi.json', 'openapi.json'], ['/v1/openapi-3.0.json', 'openapi-3.0.json']]) {
      const res = await fetch(base + url);
      if (!res.ok) throw new Error(`${url}: ${res.status}`);
      writeFileSync(join(build, file), await res.text());
    }
  });
  const runEnv = { PAGAMENTOS_URL: base, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password };
  const jar = join(dirname(require.resolve('@openapitools/openapi-generator-cli/package.json')), 'bin/openapi-generator.jar');

  if (wants('java')) {
    const out = join(build, 'java');
    await step('java: the guide shows the example\'s code', guideJavaIsMain);
    await step('java: generate (openapi-generator-plus, 3.1 document)', () => {
      writeFileSync(join(build, 'ogplus.yml'), [
        `inputPath: ${join(build, 'openapi.json')}`, `outputPath: ${join(out, 'generated')}`,
        'generator: "@openapi-generator-plus/java-jaxrs-client-generator"', 'package: br.com.minhaloja.pagamentos', 'useBeanValidation: false', '',
      ].join('\n'));
      run(process.execPath, [join(dirname(require.resolve('openapi-generator-plus/package.json')), 'bin/ogplus.js'), '-c', join(build, 'ogplus.yml')], { cwd: here });
    });
    // Debian's jars: Jackson and its JAX-RS provider, the JAX-RS API, and RESTEasy's client
    // (libresteasy3.0-java), whose proxies implement the generated *ApiSpec interfaces.
    const compileCp = ['jackson-annotations', 'jackson-core', 'jackson-databind', 'jackson-jaxrs-json-provider', 'jackson-jaxrs-base', 'jaxb-api', 'javax.ws.rs-api', 'geronimo-annotation-1.3-spec', 'resteasy-jaxrs', 'resteasy-client', 'httpclient', 'httpcore'].map((j) => `${JARS}/${j}.jar`);
    const cp = [...compileCp, ...['jboss-logging', 'commons-logging', 'commons-codec', 'commons-io', 'jakarta-activation'].map((j) => `${JARS}/${j}.jar`)];
    await step('java: compile (javac, Debian jars)', () => {
      // ApiProviders needs jackson-datatype-jdk8/jsr310 (Maven Central only): java/src/example/Json.java does its part.
      const sources = [...files(join(here, 'java/stubs'), '.java'), ...files(join(out, 'generated'), '.java').filter((f) => !f.endsWith('/ApiProviders.java')), ...files(join(here, 'java/src'), '.java')];
      writeFileSync(join(out, 'sources.txt'), sources.join('\n'));
      run('javac', ['-nowarn', '-J-XX:TieredStopAtLevel=1', '-d', join(out, 'classes'), '-cp', compileCp.join(':'), `@${join(out, 'sources.txt')}`]);
    });
    await step('java: run the flow', () => run('java', ['-cp', [join(out, 'classes'), ...cp].join(':'), 'example.Main'], { env: runEnv }));
  }
  if (wants('python')) {
    const out = join(build, 'python');
    await step('python: generate (OpenAPI Generator 5 jar, 3.0 rendering)', () =>
      run('java', ['-jar', jar, 'generate', '-i', join(build, 'openapi-3.0.json'), '-g', 'python', '-o', out, '--additional-properties=packageName=pagamentos_client'], { stdio: ['ignore', 'ignore', 'inherit'] }));
    await step('python: run the flow', () => run('/usr/bin/python3', [join(here, 'python/example.py')], { env: { ...runEnv, PYTHONPATH: out } }));
  }
  if (wants('csharp')) {
    const out = join(build, 'csharp');
    await step('csharp: generate the models (OpenAPI Generator 5 jar, 3.0 rendering)', () =>
      run('java', ['-jar', jar, 'generate', '-i', join(build, 'openapi-3.0.json'), '-g', 'csharp', '-o', out, '--global-property', 'models,modelDocs=false,modelTests=false,supportingFiles=OpenAPIDateConverter.cs', '--additional-properties=packageName=Pagamentos.Client'], { stdio: ['ignore', 'ignore', 'inherit'] }));
    await step('csharp: compile every model (mcs, Debian Newtonsoft.Json)', () =>
      run('mcs', ['-nologo', '-warn:0', `-out:${join(out, 'example.exe')}`, '-r:/usr/lib/cli/Newtonsoft.Json-5.0/Newtonsoft.Json.dll', '-r:System.ComponentModel.DataAnnotations', '-r:System.Runtime.Serialization', '-r:System.Net.Http', ...files(join(out, 'src'), '.cs'), ...files(join(here, 'csharp'), '.cs')]));
    await step('csharp: read real answers', () => run('mono', [join(out, 'example.exe')], { env: runEnv }));
  }
} finally {
  stop();
  console.log('\n== times');
  for (const [name, ms] of times) console.log(`${String(Math.round(ms / 100) / 10).padStart(6)}s  ${name}`);
  console.log(`${String(Math.round((Date.now() - started) / 100) / 10).padStart(6)}s  total`);
}
