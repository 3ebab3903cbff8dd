import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';

// Webhooks must not reach into our own network (SSRF): loopback, private, link-local, CGNAT,
// reserved, multicast and unspecified addresses are refused, at registration and again at every
// connection (DNS can change between the two). Live mode always; the sandbox too unless
// WEBHOOK_ALLOW_PRIVATE_URLS is on (its default outside production, so merchants can test
// against their own machine).

const V4_BLOCKED_CIDRS: Array<[string, number]> = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const V4_BLOCKED: Array<[number, number]> = V4_BLOCKED_CIDRS.map(([a, bits]) => [v4ToInt(a) as number, bits]);

function v4ToInt(address: string): number | null {
  const parts = address.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

function v4Private(n: number): boolean {
  return V4_BLOCKED.some(([base, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)));
}

// The eight 16-bit groups of an IPv6 address (with an optional trailing dotted quad and zone).
function v6Groups(address: string): number[] | null {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4ToInt(dotted[1]);
    if (n === null) return null;
    text = text.slice(0, -dotted[1].length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  if (fill < 0 || (halves.length === 1 && head.length !== 8)) return null;
  const groups = [...head, ...new Array<number>(fill).fill(0), ...tail];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g)) ? groups : null;
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) {
    const n = v4ToInt(address);
    return n === null || v4Private(n);
  }
  if (family === 6) {
    const g = v6Groups(address);
    if (!g) return true;
    const embeddedV4 = (hi: number, lo: number) => v4Private(hi * 65536 + lo);
    const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
    if (zeros(0, 8)) return true; // ::
    if (zeros(0, 7) && g[7] === 1) return true; // ::1
    if (zeros(0, 5) && g[5] === 0xffff) return embeddedV4(g[6], g[7]); // ::ffff:a.b.c.d (IPv4-mapped)
    if (zeros(0, 6)) return true; // ::a.b.c.d (IPv4-compatible, deprecated)
    if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embeddedV4(g[6], g[7]); // NAT64
    if (g[0] === 0x2002) return embeddedV4(g[1], g[2]); // 6to4
    if (g[0] === 0x0100 && zeros(1, 4)) return true; // discard-only 100::/64
    if (g[0] === 0x2001 && g[1] === 0x0db8) return true; // documentation
    if ((g[0] & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
    if ((g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xffc0) === 0xfec0) return true; // link-local, site-local
    if ((g[0] & 0xff00) === 0xff00) return true; // multicast
    return false;
  }
  return true; // not an address at all: refuse
}

export function resolvesToPrivate(hostname: string): Promise<boolean> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return Promise.resolve(isPrivateAddress(host));
  if (host === 'localhost' || host.endsWith('.localhost')) return Promise.resolve(true);
  return new Promise((resolve) => {
    dnsLookup(host, { all: true }, (err, addresses: LookupAddress[]) => {
      if (err || addresses.length === 0) return resolve(true); // unresolvable: refuse
      resolve(addresses.some((a) => isPrivateAddress(a.address)));
    });
  });
}

// The host of a URL when it is an IP literal (Node connects to those without calling `lookup`,
// so the dispatcher checks them itself), else null.
export function ipLiteralHost(hostname: string): string | null {
  const host = hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? host : null;
}

// A `lookup` for http.request that refuses private addresses: used for every live delivery, and
// for sandbox ones unless WEBHOOK_ALLOW_PRIVATE_URLS is on.
export function publicOnlyLookup(hostname: string, options: object, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, []);
    const allowed = addresses.filter((a) => !isPrivateAddress(a.address));
    if (allowed.length === 0) return callback(Object.assign(new Error('webhook URL resolves to a private address'), { code: 'ERR_PRIVATE_ADDRESS' }), []);
    if ((options as { all?: boolean }).all) return callback(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
}
