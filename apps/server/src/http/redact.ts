// Secrets shaped like ours, wherever they turn up in a log line: a key pasted into the path of an
// unknown route, a header nobody expected to carry one, an error message quoting a URL. Field
// names (LOG_REDACT in app.ts) catch the places we know; this catches the text itself, on every
// line the logger writes, so no field we did not think of can leak one.
//   sk_/pk_ API keys (any mode), whsec_ webhook signing secrets, and checkout client secrets
//   (`cs_<id>_secret_<random>`).
// No word boundary before a prefix: `foo_sk_test_...` holds a key as much as ` sk_test_...` does
// (a word that merely ends in "sk" loses its tail too, which a log can afford).
const SECRET_SHAPES = /(sk|pk|rk)_[A-Za-z0-9]{2,8}_[A-Za-z0-9]{4,}|whsec_[A-Za-z0-9+/=_-]{4,}|(cs_[A-Za-z0-9]+)_secret_[A-Za-z0-9]+/g;

// A URL logged as the client sent it may hold a secret percent-encoded (`sk%5Ftest%5F...`, or
// every byte): escapes of the characters secrets are made of, and of `%` itself (a double
// encoding), are decoded before looking. No other escape is: a decoded `"` or `\` would break
// the line's JSON.
const ESCAPE = /%([0-9A-Fa-f]{2})/g;
const SECRET_CHARACTER = /^[A-Za-z0-9+/=_%-]$/;

function decodeSecretCharacters(text: string): string {
  let decoded = text;
  // Each round undoes one level of encoding; three is more than any client or proxy adds.
  for (let round = 0; round < 3 && decoded.includes('%'); round++) {
    const next = decoded.replace(ESCAPE, (escape, hex: string) => {
      const c = String.fromCharCode(parseInt(hex, 16));
      return SECRET_CHARACTER.test(c) ? c : escape;
    });
    if (next === decoded) break;
    decoded = next;
  }
  return decoded;
}

const redactShapes = (text: string) => text.replace(SECRET_SHAPES, (match, keyKind: string | undefined, session: string | undefined) => {
  if (keyKind) return `${keyKind}_[redacted]`;
  if (session) return `${session}_secret_[redacted]`;
  return 'whsec_[redacted]';
});

export function redactSecrets(text: string): string {
  // Nearly every line has neither an escape nor one of the prefixes: skip the regexes then.
  const encoded = text.includes('%');
  if (!encoded && !text.includes('sk_') && !text.includes('pk_') && !text.includes('rk_') && !text.includes('whsec_') && !text.includes('_secret_')) return text;
  const redacted = redactShapes(text);
  if (!encoded) return redacted;
  // Only a line that hides a secret behind escapes is logged decoded; any other keeps its bytes.
  const decoded = decodeSecretCharacters(redacted);
  const decodedRedacted = redactShapes(decoded);
  return decodedRedacted === decoded ? redacted : decodedRedacted;
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
