// Origins allowed to frame the hosted checkout (CSP `frame-ancestors`), per merchant account.
// Exact origins, `scheme://host[:port]`: https for any host, http only for the machine itself
// (localhost, 127.0.0.1), whose port may be `*` (a developer's server moves ports). Nothing else
// takes a wildcard: a payment page framed by an unexpected site is how clickjacking starts.

export const DEFAULT_SANDBOX_EMBED_ORIGINS: readonly string[] = ['http://localhost:*', 'http://127.0.0.1:*'];
export const MAX_EMBED_ORIGINS = 20;
const MAX_ORIGIN_LENGTH = 253 + 20;

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1']);
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const SHAPE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/:?#@]+)(?::(\*|\d{1,5}))?$/;

export class InvalidOrigin extends Error {}

// The canonical form of one allowed origin (lowercase, default port dropped), or InvalidOrigin
// saying what is wrong with it.
export function parseEmbedOrigin(input: string): string {
  if (input.length > MAX_ORIGIN_LENGTH) throw new InvalidOrigin('is too long');
  const m = SHAPE.exec(input);
  if (!m) throw new InvalidOrigin('must be an origin, scheme://host[:port], with no path, query or trailing slash');
  const scheme = m[1].toLowerCase();
  const host = m[2].toLowerCase();
  const port = m[3];
  if (scheme !== 'https' && scheme !== 'http') throw new InvalidOrigin('must use https (or http for localhost)');
  const local = LOCAL_HOSTS.has(host);
  if (scheme === 'http' && !local) throw new InvalidOrigin('must use https: only localhost and 127.0.0.1 may use http');
  if (!IPV4.test(host) && !(host.split('.').every((label) => LABEL.test(label)) && /[a-z]/.test(host.split('.').at(-1) as string))) {
    throw new InvalidOrigin('has an invalid host (a domain name or an IPv4 address)');
  }
  if (port === '*') {
    if (!local) throw new InvalidOrigin('may only use a wildcard port (:*) for localhost or 127.0.0.1');
    return `${scheme}://${host}:*`;
  }
  if (port !== undefined) {
    const n = Number(port);
    if (n < 1 || n > 65535 || port !== String(n)) throw new InvalidOrigin('has an invalid port (1-65535)');
    if ((scheme === 'https' && n === 443) || (scheme === 'http' && n === 80)) return `${scheme}://${host}`;
    return `${scheme}://${host}:${n}`;
  }
  return `${scheme}://${host}`;
}

// The list as stored: canonical, without duplicates, in the order given.
export function normalizeEmbedOrigins(origins: readonly string[]): string[] {
  const out: string[] = [];
  for (const origin of origins) {
    const canonical = parseEmbedOrigin(origin);
    if (!out.includes(canonical)) out.push(canonical);
  }
  return out;
}

// The account's list: what an admin set, else the default for sandbox sessions. Live sessions
// are framed only by origins an admin has set.
export function effectiveEmbedOrigins(stored: string | null, livemode: boolean): string[] {
  if (stored !== null) return JSON.parse(stored) as string[];
  return livemode ? [] : [...DEFAULT_SANDBOX_EMBED_ORIGINS];
}

export function frameAncestors(origins: readonly string[]): string {
  return origins.length === 0 ? "'none'" : origins.join(' ');
}
