import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Certificates made per run with openssl, for connector account tests (loopback only).
export interface TestCert {
  certificatePem: string;
  privateKeyPem: string;
}

export function selfSignedCert(cn = 'pagamentos-test-client', days = 2): TestCert {
  const dir = mkdtempSync(join(tmpdir(), 'cert-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', String(days), '-subj', `/CN=${cn}`, '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    return { certificatePem: readFileSync(join(dir, 'cert.pem'), 'utf8'), privateKeyPem: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function toPkcs12(cert: TestCert, password: string, legacy = false): string {
  const dir = mkdtempSync(join(tmpdir(), 'p12-'));
  try {
    writeFileSync(join(dir, 'cert.pem'), cert.certificatePem);
    writeFileSync(join(dir, 'key.pem'), cert.privateKeyPem);
    execFileSync('openssl', ['pkcs12', '-export', ...(legacy ? ['-legacy'] : []), '-in', join(dir, 'cert.pem'), '-inkey', join(dir, 'key.pem'), '-out', join(dir, 'c.p12'), '-passout', `pass:${password}`], { stdio: 'ignore' });
    return readFileSync(join(dir, 'c.p12')).toString('base64');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}



// A minimal PSP on loopback for admin routes that must reach one (token, webhook): mutual TLS,
// its own self-signed certificate (trust it with caPem). The whole standard is the fake PSP's
// (test/fakes/), not this.
export async function webhookOnlyPsp(): Promise<{ url: string; caPem: string; webhooks: Map<string, string>; close: () => Promise<void> }> {
  const { createServer } = await import('node:https');
  const server = selfSignedCert('127.0.0.1');
  const webhooks = new Map<string, string>();
  const https = createServer({ cert: server.certificatePem, key: server.privateKeyPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const send = (status: number, json: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      if (!(req.socket as import('node:tls').TLSSocket).getPeerCertificate()?.subject) return send(403, { title: 'no client certificate' });
      if (req.url === '/oauth/token') return send(200, { access_token: 'tok-' + Math.random(), token_type: 'Bearer', expires_in: 3600 });
      const m = /^\/webhook\/(.+)$/.exec(req.url ?? '');
      if (m && req.method === 'PUT') {
        webhooks.set(decodeURIComponent(m[1]), JSON.parse(body).webhookUrl);
        return send(200, {});
      }
      if (m && req.method === 'GET') return webhooks.has(decodeURIComponent(m[1])) ? send(200, { webhookUrl: webhooks.get(decodeURIComponent(m[1])), chave: m[1] }) : send(404, { title: 'Webhook não encontrado' });
      send(404, { title: 'not found' });
    });
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  const port = (https.address() as import('node:net').AddressInfo).port;
  return { url: `https://127.0.0.1:${port}`, caPem: server.certificatePem, webhooks, close: () => new Promise((r) => { https.closeAllConnections(); https.close(() => r()); }) };
}
