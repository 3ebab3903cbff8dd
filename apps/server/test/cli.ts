// The CLI as `npm start`, `npm run cli` and production run it: the compiled dist/cli.js with plain
// node (no TypeScript loader). Importing this builds dist/ first when it is missing or older than
// src/ (scripts/ensure-built.mjs: a walk over modification times when it is current), so a test
// file run on its own still tests the code as it is.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));
execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/ensure-built.mjs', import.meta.url))], { cwd: SERVER_DIR, stdio: ['ignore', 'inherit', 'inherit'] });

// Node's arguments that run the CLI; a command and its flags follow (`[...CLI, 'serve']`). Stack
// traces name the TypeScript lines (source maps). Relative to the server workspace (cwd).
export const CLI = ['--enable-source-maps', 'dist/cli.js'];
// The same, as a shell command line (for the README's blocks, pasted).
export const CLI_SHELL = `${JSON.stringify(process.execPath)} --enable-source-maps dist/cli.js`;
