import net from 'node:net';

// A raw HTTP/1.1 exchange over a real socket: the bytes go out exactly as given (malformed on
// purpose, when a test wants), and the answer is parsed by hand, as a client would see it.

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  raw: string;
}

// Sends `request` and reads the answer: done when a complete response has arrived (its
// Content-Length, or its last chunk) or the server closed the connection. Interim 1xx responses
// are skipped. null: the server closed without answering. `head`: the request was a HEAD (the
// answer has headers only).
export function rawRequest(port: number, request: string | Buffer, options: { deadlineMs?: number; endAfterWrite?: boolean; head?: boolean } = {}): Promise<RawResponse | null> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseResponse(Buffer.concat(chunks).toString('latin1')));
    };
    // Bounds a hang only (the server answering is what the caller waits for).
    const timer = setTimeout(() => {
      settled = true;
      socket.destroy();
      reject(new Error(`no answer within ${options.deadlineMs ?? 30_000} ms to ${JSON.stringify(String(request).slice(0, 300))}`));
    }, options.deadlineMs ?? 30_000);
    socket.on('data', (d) => {
      chunks.push(d);
      if (complete(Buffer.concat(chunks).toString('latin1'), options.head === true)) finish();
    });
    // A reset after the answer was read still counts as an answer.
    socket.on('error', finish);
    socket.on('close', finish);
    socket.write(request, () => {
      if (options.endAfterWrite) socket.end();
    });
  });
}

// Whether `text` holds a whole final response.
function complete(text: string, head: boolean): boolean {
  let rest = text;
  for (;;) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) return false;
    const head0 = rest.slice(0, headEnd);
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head0)?.[1]);
    const body = rest.slice(headEnd + 4);
    if (status >= 100 && status < 200) {
      rest = body;
      continue;
    }
    if (head || status === 204 || status === 304) return true;
    const length = /\r\ncontent-length: *(\d+)/i.exec(head0);
    if (length) return Buffer.byteLength(body, 'latin1') >= Number(length[1]);
    if (/\r\ntransfer-encoding: *chunked/i.test(head0)) return /(^|\r\n)0\r\n\r\n$/.test(body);
    return false;
  }
}

export function parseResponse(text: string): RawResponse | null {
  let rest = text;
  for (;;) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) return null;
    const [statusLine, ...lines] = rest.slice(0, headEnd).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    if (!m) return null;
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    let body = rest.slice(headEnd + 4);
    if (status >= 100 && status < 200) {
      rest = body;
      continue;
    }
    if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
    else if (headers['content-length'] !== undefined) body = body.slice(0, Number(headers['content-length']));
    // Bytes as they came (latin1), then read as UTF-8 as a client would.
    return { status, headers, body: Buffer.from(body, 'latin1').toString('utf8'), raw: text };
  }
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    if (lineEnd < 0) return out;
    const size = parseInt(rest.slice(0, lineEnd), 16);
    if (!size) return out;
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}
