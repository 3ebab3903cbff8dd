import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

// Time is an input (src/clock.ts): nothing in the server reads the wall clock but the clock
// itself, so every time-based rule can be tested by moving a ManualClock. ESLint says the same
// (no-restricted-syntax in eslint.config.js); this test holds without it, on the parsed code
// (comments and strings that mention Date.now() are not reads).

const SRC = join(import.meta.dirname, '..', 'src');
const ALLOWED = new Set(['clock.ts']);

// Each wall-clock read in `code`: Date.now(), globalThis.Date.now(), new Date() and new Date
// without an argument list.
export function wallClockReads(code: string, fileName = 'sample.ts'): Array<{ line: number; text: string }> {
  const source = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true);
  const found: Array<{ line: number; text: string }> = [];
  const isDate = (e: ts.Expression) => (ts.isIdentifier(e) && e.text === 'Date') || (ts.isPropertyAccessExpression(e) && e.name.text === 'Date');
  const visit = (node: ts.Node) => {
    const read = (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'now' && isDate(node.expression.expression))
      || (ts.isNewExpression(node) && isDate(node.expression) && (node.arguments === undefined || node.arguments.length === 0));
    if (read) found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: node.getText() });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|cts)$/.test(entry.name) ? [path] : [];
  });
}

describe('no wall-clock reads in apps/server/src outside clock.ts', () => {
  test('the scanner finds every form of a read, and nothing else', () => {
    const reads = (code: string) => wallClockReads(code).map((r) => r.text);
    assert.deepEqual(reads('const a = Date.now();'), ['Date.now()']);
    assert.deepEqual(reads('const b = new Date();'), ['new Date()']);
    assert.deepEqual(reads('const c = new Date;'), ['new Date']);
    assert.deepEqual(reads('const d = globalThis.Date.now() + 1;'), ['globalThis.Date.now()']);
    assert.deepEqual(reads('f(x, () => new Date().toISOString());\nconst e = Date.now();'), ['new Date()', 'Date.now()']);
    assert.deepEqual(wallClockReads('\n\nconst late = Date.now();').map((r) => r.line), [3]);
    // Not reads: a date from a given time, a comment, a string, the Clock.
    assert.deepEqual(reads('const f = new Date(0); const g = new Date(clock.nowMs()).toISOString();'), []);
    assert.deepEqual(reads('// Date.now() and new Date() are banned\n/* new Date() */'), []);
    assert.deepEqual(reads("const s = 'Date.now() or new Date()'; const t = `new Date()`;"), []);
    assert.deepEqual(reads('const n = clock.nowMs(); const p = Date.parse(iso); const u = Date.UTC(2026, 0, 1);'), []);
  });

  test('src has none (clock.ts is the one place that may)', () => {
    const files = sourceFiles(SRC);
    assert.ok(files.length > 50, `scanned ${files.length} files under src`);
    const offenders = files
      .filter((file) => !ALLOWED.has(relative(SRC, file)))
      .flatMap((file) => wallClockReads(readFileSync(file, 'utf8'), file).map((r) => `${relative(SRC, file)}:${r.line}: ${r.text}`));
    assert.deepEqual(offenders, [], 'take the time from the Clock (store.clock, ctx.clock; src/clock.ts)');
    // And clock.ts does read it (the scanner is looking at the right tree).
    assert.ok(wallClockReads(readFileSync(join(SRC, 'clock.ts'), 'utf8')).length > 0);
  });
});

// Tests wait only for I/O (issue 24): a time rule is tested by moving a ManualClock, and the
// worker's work is run when a suite needs it (helpers.ts: drain, startManualApp). What polls
// with eventually() is left where a socket, a process or a browser is on the other end, and says
// which in a `// Waits ...` comment on one of the three lines above the call.
const ROOT = join(import.meta.dirname, '..', '..', '..');
const WHY_WINDOW_LINES = 3;

export function unexplainedWaits(code: string): number[] {
  const lines = code.split('\n');
  let lastWhy = -Infinity;
  const found: number[] = [];
  lines.forEach((line, i) => {
    if (/\/\/ Waits\b/.test(line)) lastWhy = i;
    const call = /\beventually\(/.test(line) && !/\bfunction eventually\b|^\s*import\b/.test(line);
    if (call && i - lastWhy > WHY_WINDOW_LINES && !/\/\/ Waits\b/.test(line)) found.push(i + 1);
  });
  return found;
}

describe('every eventually() in the suites says what it waits for', () => {
  test('the check finds a wait without its reason, and not one with it', () => {
    assert.deepEqual(unexplainedWaits('await eventually(async () => x, "x");'), [1]);
    assert.deepEqual(unexplainedWaits('// Waits for I/O: the browser.\nawait eventually(async () => x, "x");'), []);
    assert.deepEqual(unexplainedWaits('// Waits for I/O: the browser.\n\n\n\nawait eventually(async () => x, "x");'), [5], 'too far above');
    assert.deepEqual(unexplainedWaits('import { eventually } from "./helpers.js";\nexport async function eventually() {}'), []);
  });

  test('in every workspace\'s tests', () => {
    const files = ['apps', 'packages'].flatMap((group) => readdirSync(join(ROOT, group), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => {
        const dir = join(ROOT, group, d.name, 'test');
        try {
          return sourceFiles(dir).filter((f) => f.endsWith('.test.ts'));
        } catch {
          return [];
        }
      }));
    assert.ok(files.length > 60, `scanned ${files.length} test files`);
    // This file names eventually( in its samples and its check.
    const offenders = files.filter((file) => !file.endsWith('no-wall-clock.test.ts')).flatMap((file) => unexplainedWaits(readFileSync(file, 'utf8')).map((line) => `${relative(ROOT, file)}:${line}`));
    assert.deepEqual(offenders, [], 'move the clock or drain() the worker instead; or say what is on the other end (// Waits for I/O: ...)');
  });
});
