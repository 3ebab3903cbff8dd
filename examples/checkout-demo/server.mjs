// The merchant's side of a hosted checkout, in one file and no dependencies:
// - GET /            the shop page (public/index.html) with a "Pagar" button;
// - POST /session    creates a checkout session with the SECRET key (never in the browser) and
//                    returns only { sessionId, clientSecret } to the page;
// - GET /confirm?session=cs_…   asks the payment service, from the server, whether the session
//                    is paid: what a shop must check (or learn by webhook) before it ships.
//
// Run: SK=sk_test_… API_URL=http://localhost:3000 node server.mjs   (PORT=4000 by default)
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

const FILES = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/shop.js': ['shop.js', 'text/javascript; charset=utf-8'],
  '/shop.css': ['shop.css', 'text/css; charset=utf-8'],
};

export function createDemoServer({ apiUrl, secretKey, amount = 10_50, description = 'Camiseta Pagamentos (M)' }) {
  const api = new URL(apiUrl).origin;
  const call = async (method, path, body) => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json', ...(method === 'POST' ? { 'idempotency-key': randomUUID() } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  return http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const send = (status, type, body, headers = {}) => res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers }).end(body);
    try {
      if (req.method === 'GET' && FILES[url.pathname]) {
        const [file, type] = FILES[url.pathname];
        let body = readFileSync(new URL(`./public/${file}`, import.meta.url), 'utf8');
        // The library comes from the payment service itself (/v1/checkout.js).
        if (file === 'index.html') body = body.replaceAll('%API_URL%', api);
        // The shop's own CSP: its own files, the payment service's script and frame.
        return send(200, type, body, { 'content-security-policy': `default-src 'self'; script-src 'self' ${api}; frame-src ${api}; connect-src 'self'; img-src 'self'; base-uri 'none'` });
      }
      if (req.method === 'POST' && url.pathname === '/session') {
        // In a real shop the amount comes from the cart on the server, never from the browser.
        const created = await call('POST', '/v1/checkout/sessions', {
          amount, description, methods: ['credit_card', 'pix'], installments: 3,
          metadata: { order: `pedido-${Date.now()}` },
        });
        if (created.status !== 200) return send(502, 'application/json', JSON.stringify({ error: created.body.error?.message ?? 'could not create the session' }));
        return send(200, 'application/json', JSON.stringify({ sessionId: created.body.id, clientSecret: created.body.clientSecret }));
      }
      if (req.method === 'GET' && url.pathname === '/confirm') {
        const id = url.searchParams.get('session') ?? '';
        if (!/^cs_[a-z0-9]+$/i.test(id)) return send(400, 'application/json', JSON.stringify({ error: 'session' }));
        const s = await call('GET', `/v1/checkout/sessions/${id}`);
        if (s.status !== 200) return send(502, 'application/json', JSON.stringify({ error: 'could not read the session' }));
        const payment = s.body.paymentId ? await call('GET', `/v1/payments/${s.body.paymentId}`) : null;
        return send(200, 'application/json', JSON.stringify({ sessionStatus: s.body.status, paymentId: s.body.paymentId, paymentStatus: payment?.body.status ?? null }));
      }
      send(404, 'text/plain; charset=utf-8', 'not found');
    } catch (e) {
      send(502, 'application/json', JSON.stringify({ error: 'payment service unreachable' }));
    }
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secretKey = process.env.SK;
  if (!secretKey) {
    console.error('Set SK to a secret key (npm start at the repository root prints a sandbox one).');
    process.exit(1);
  }
  const apiUrl = process.env.API_URL ?? 'http://localhost:3000';
  const port = Number(process.env.PORT ?? 4000);
  // 127.0.0.1 while the API is on localhost: two origins, as a real shop and the service are.
  createDemoServer({ apiUrl, secretKey }).listen(port, '127.0.0.1', () => {
    console.log(`Shop: http://127.0.0.1:${port}/  (payment service: ${apiUrl})`);
  });
}
