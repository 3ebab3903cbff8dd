// The password of `admin:create`, read so that it shows nowhere: typed at a prompt that does not
// echo it (a terminal), or piped in on standard input (a script, a secrets manager). --password on
// the command line still works, with a warning: it stays in the shell's history and shows in `ps`.
import type { ReadStream } from 'node:tty';

const MAX_PASSWORD_CHARS = 1024;

// Reads one line from a terminal with echo off (raw mode), answering Backspace and Ctrl-C.
function promptHidden(input: ReadStream, output: NodeJS.WritableStream, question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed = '';
    const wasRaw = input.isRaw;
    // Echo goes off before the question shows: whatever is typed once the question is visible
    // must not echo (a fast typist, or a script that answers the prompt, raced the other order).
    input.setRawMode(true);
    output.write(question);
    input.resume();
    input.setEncoding('utf8');
    const done = (error: Error | null) => {
      input.setRawMode(wasRaw);
      input.pause();
      input.removeListener('data', onData);
      output.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done(null);
        if (ch === '\u0003') return done(new Error('canceled'));
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else if (ch >= ' ' && typed.length < MAX_PASSWORD_CHARS) typed += ch;
      }
    };
    input.on('data', onData);
  });
}

async function readAll(input: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += typeof chunk === 'string' ? chunk : (chunk).toString('utf8');
    if (text.length > MAX_PASSWORD_CHARS + 2) throw new Error(`the password on standard input is over ${MAX_PASSWORD_CHARS} characters`);
  }
  // One trailing newline (echo, a heredoc) is not part of the password.
  return text.replace(/\r?\n$/, '');
}

export async function readAdminPassword(
  fromFlag: string | undefined,
  io: { stdin: NodeJS.ReadableStream & Partial<ReadStream>; stderr: NodeJS.WritableStream },
): Promise<string> {
  if (fromFlag !== undefined) {
    io.stderr.write('warning: --password leaves the password in your shell history and shows it to `ps`; run admin:create without it to be asked for it, or pipe it in on standard input.\n');
    return fromFlag;
  }
  if (io.stdin.isTTY && typeof io.stdin.setRawMode === 'function') {
    const tty = io.stdin as ReadStream;
    const first = await promptHidden(tty, io.stderr, 'Password (not shown): ');
    const again = await promptHidden(tty, io.stderr, 'Again: ');
    if (first !== again) throw new Error('the two passwords differ; nothing was created');
    return first;
  }
  return readAll(io.stdin);
}
