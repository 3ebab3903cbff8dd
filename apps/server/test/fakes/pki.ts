// Certificates made per run for mutual TLS on loopback: a CA, server certificates for
// 127.0.0.1/localhost, client certificates, all signed by that CA; and, for attacks, a second
// CA nobody trusts. Made with the `openssl` CLI (Node 20's node:crypto reads X.509 but cannot
// issue it), EC P-256 keys, in a temporary directory removed by `dispose()`.
// Nothing here is a secret worth keeping: the keys live for one test run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';

export interface KeyPair {
  /** PEM certificate. */
  cert: string;
  /** PEM private key (PKCS#8). */
  key: string;
  /** SHA-256 fingerprint, "AB:CD:...", as node:tls reports `fingerprint256`. */
  fingerprint256: string;
  /** The certificate's notAfter (ms since the epoch). */
  notAfterMs: number;
}

export interface Pki {
  /** The CA's certificate: what servers and clients of this run trust. */
  ca: string;
  caPair: KeyPair;
  /** A server certificate for 127.0.0.1 and localhost (and `names`). */
  issueServer(commonName: string, names?: string[]): KeyPair;
  /** A client certificate (extendedKeyUsage clientAuth). */
  issueClient(commonName: string): KeyPair;
  dispose(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function pair(dir: string, name: string): KeyPair {
  const cert = readFileSync(join(dir, `${name}.crt`), 'utf8');
  const x = new X509Certificate(cert);
  return { cert, key: readFileSync(join(dir, `${name}.key`), 'utf8'), fingerprint256: x.fingerprint256, notAfterMs: Date.parse(x.validTo) };
}

/** A fresh CA and an issuer of certificates under it. `days` is each certificate's validity. */
export function createPki(options: { caName?: string; days?: number } = {}): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'fake-pki-'));
  const days = String(options.days ?? 2);
  const caName = options.caName ?? 'Fake PSP test CA';
  let serial = 0;
  try {
    openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'ca.key'], dir);
    openssl(['req', '-x509', '-new', '-key', 'ca.key', '-sha256', '-days', days, '-subj', `/CN=${caName}`,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-out', 'ca.crt'], dir);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`pki: openssl failed (is the openssl CLI installed?): ${(err as Error).message}`, { cause: err });
  }
  const caPair = pair(dir, 'ca');

  function issue(commonName: string, ext: string[]): KeyPair {
    const name = `c${++serial}`;
    openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`], dir);
    openssl(['req', '-new', '-key', `${name}.key`, '-subj', `/CN=${commonName.replace(/[/=]/g, '_')}`, '-out', `${name}.csr`], dir);
    writeFileSync(join(dir, `${name}.ext`), ext.join('\n') + '\n');
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', String(1000 + serial),
      '-days', days, '-sha256', '-extfile', `${name}.ext`, '-out', `${name}.crt`], dir);
    return pair(dir, name);
  }

  return {
    ca: caPair.cert,
    caPair,
    issueServer(commonName, names = []) {
      const dns = ['localhost', ...names].map((n) => `DNS:${n}`);
      return issue(commonName, ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth',
        `subjectAltName=IP:127.0.0.1,${dns.join(',')}`]);
    },
    issueClient(commonName) {
      return issue(commonName, ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=clientAuth']);
    },
    dispose() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
