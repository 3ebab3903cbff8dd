import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';

// Live-mode webhooks must not reach into our own network (SSRF): loopback, private, link-local,
// CGNAT and unspecified addresses are refused, at registration and again at every connection
// (DNS can change between the two). The sandbox allows them so merchants can test locally.
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) {
    const [a, b] = address.split('.').map(Number);
    return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224;
  }
  if (family === 6) {
    const lower = address.toLowerCase();
    if (lower === '::1' || lower === '::') return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
    if (mapped) return isPrivateAddress(mapped[1]);
    return /^(fc|fd|fe8|fe9|fea|feb|ff)/.test(lower);
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

// A `lookup` for http.request that refuses private addresses: used for live-mode deliveries.
export function publicOnlyLookup(hostname: string, options: object, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, []);
    const allowed = addresses.filter((a) => !isPrivateAddress(a.address));
    if (allowed.length === 0) return callback(new Error('webhook URL resolves to a private address'), []);
    if ((options as { all?: boolean }).all) return callback(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
}
