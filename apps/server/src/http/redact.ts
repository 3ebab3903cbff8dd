// Secrets shaped like ours, wherever they turn up in a log line: a key pasted into the path of an
// unknown route, a header nobody expected to carry one, an error message quoting a URL. Field
// names (LOG_REDACT in app.ts) catch the places we know; this catches the text itself, on every
// line the logger writes, so no field we did not think of can leak one.
//   sk_/pk_ API keys (any mode), whsec_ webhook signing secrets, and checkout client secrets
//   (`cs_<id>_secret_<random>`).
const SECRET_SHAPES = /\b(sk|pk|rk)_[A-Za-z0-9]{2,8}_[A-Za-z0-9]{4,}|\bwhsec_[A-Za-z0-9+/=_-]{4,}|\b(cs_[A-Za-z0-9]+)_secret_[A-Za-z0-9]+/g;

export function redactSecrets(text: string): string {
  // Nearly every line has none of the prefixes: skip the regex then.
  if (!text.includes('sk_') && !text.includes('pk_') && !text.includes('rk_') && !text.includes('whsec_') && !text.includes('_secret_')) return text;
  return text.replace(SECRET_SHAPES, (match, keyKind: string | undefined, session: string | undefined) => {
    if (keyKind) return `${keyKind}_[redacted]`;
    if (session) return `${session}_secret_[redacted]`;
    return 'whsec_[redacted]';
  });
}

export interface LineStream {
  write(line: string): unknown;
  flush?(cb?: (err?: Error) => void): void;
  flushSync?(): void;
  end?(): void;
}

// A pino destination that redacts each serialized line before it is written to `inner`.
export function redactingStream(inner: LineStream): LineStream {
  return {
    write: (line: string) => inner.write(redactSecrets(line)),
    flush: inner.flush ? (cb) => inner.flush!(cb) : undefined,
    flushSync: inner.flushSync ? () => inner.flushSync!() : undefined,
    end: inner.end ? () => inner.end!() : undefined,
  };
}
