// Secret settings read from files (NAME_FILE): how compose secrets reach the server
// (compose.yaml mounts them at /run/secrets/; .ci/container-smoke.sh runs the stack on them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, SECRET_SETTINGS } from '../src/config.js';

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'secret-files-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('DATABASE_URL_FILE and METRICS_TOKEN_FILE: the file is the value, without its trailing newline', () => withDir((dir) => {
  writeFileSync(join(dir, 'database_url'), 'postgres://app:s3cret@db:5432/payments\n');
  writeFileSync(join(dir, 'metrics_token'), 'mt_0123456789abcdef');
  const config = loadConfig({ DATABASE_URL_FILE: join(dir, 'database_url'), METRICS_TOKEN_FILE: join(dir, 'metrics_token') });
  assert.equal(config.databaseUrl, 'postgres://app:s3cret@db:5432/payments');
  assert.equal(config.metricsToken, 'mt_0123456789abcdef');
}));

test('a secret file keeps inner whitespace and only one trailing newline goes', () => withDir((dir) => {
  writeFileSync(join(dir, 'metrics_token'), 'a b\n\n');
  assert.equal(loadConfig({ METRICS_TOKEN_FILE: join(dir, 'metrics_token') }).metricsToken, 'a b\n');
}));

test('without NAME_FILE the environment variable is used as before', () => {
  assert.equal(loadConfig({ METRICS_TOKEN: 'plain' }).metricsToken, 'plain');
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://x@h/db', DATABASE_URL_FILE: '' }).databaseUrl, 'postgres://x@h/db');
});

test('both NAME and NAME_FILE set is refused, naming the setting and not the value', () => withDir((dir) => {
  writeFileSync(join(dir, 'metrics_token'), 'from-file-value');
  assert.throws(() => loadConfig({ METRICS_TOKEN: 'from-env-value', METRICS_TOKEN_FILE: join(dir, 'metrics_token') }), (error: Error) => {
    assert.match(error.message, /METRICS_TOKEN and METRICS_TOKEN_FILE are both set/);
    assert.doesNotMatch(error.message, /from-(env|file)-value/);
    return true;
  });
}));

test('a missing or empty secret file is refused at start, naming the file', () => withDir((dir) => {
  assert.throws(() => loadConfig({ DATABASE_URL_FILE: join(dir, 'nope') }), /DATABASE_URL_FILE: cannot read .*nope \(ENOENT\)/);
  writeFileSync(join(dir, 'empty'), '\n');
  assert.throws(() => loadConfig({ DATABASE_URL_FILE: join(dir, 'empty') }), /DATABASE_URL_FILE: .*empty is empty/);
}));

test('every secret setting has a _FILE form', () => withDir((dir) => {
  for (const name of SECRET_SETTINGS) {
    const masterKey = 'k1:' + Buffer.alloc(32, 7).toString('base64');
    const value = name === 'DATABASE_URL' ? 'postgres://u:p@h/d' : name === 'MASTER_KEYS' ? masterKey : 'v-' + name;
    writeFileSync(join(dir, name), value + '\n');
    const config = loadConfig({ [`${name}_FILE`]: join(dir, name) });
    const read = name === 'DATABASE_URL' ? config.databaseUrl : name === 'MASTER_KEYS' ? config.masterKeys?.current.id : config.metricsToken;
    assert.equal(read, name === 'MASTER_KEYS' ? 'k1' : value, name);
  }
}));
