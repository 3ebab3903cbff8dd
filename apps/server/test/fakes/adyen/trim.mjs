// Trims Adyen's official contracts (Adyen/adyen-openapi, MIT) to what the connector uses: the
// paths and webhooks listed below and every component they reach, nothing else changed.
//   node trim.mjs <CheckoutService-v71.json> <Webhooks-v1.json>
// writes checkout-v71.trimmed.json and webhooks-v1.trimmed.json beside this file; NOTICE
// records the upstream commit and the sha256 of the inputs and outputs (checked by the tests).
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHECKOUT_PATHS = ['/payments', '/payments/details', '/payments/{paymentPspReference}/captures', '/payments/{paymentPspReference}/refunds', '/payments/{paymentPspReference}/cancels', '/cancels'];
export const WEBHOOKS = ['/AUTHORISATION', '/CAPTURE', '/CAPTURE_FAILED', '/CANCELLATION', '/CANCEL_OR_REFUND', '/TECHNICAL_CANCEL', '/REFUND', '/REFUND_FAILED', '/NOTIFICATION_OF_CHARGEBACK', '/CHARGEBACK', '/CHARGEBACK_REVERSED', '/SECOND_CHARGEBACK', '/REQUEST_FOR_INFORMATION'];

function closure(doc, roots) {
  const seen = new Set();
  const walk = (v) => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!v || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string' && x.startsWith('#/components/')) {
        if (seen.has(x)) continue;
        seen.add(x);
        const [, , kind, name] = x.split('/');
        walk(doc.components[kind][name]);
      } else walk(x);
    }
  };
  walk(roots);
  const components = {};
  for (const ref of [...seen].sort()) {
    const [, , kind, name] = ref.split('/');
    (components[kind] ??= {})[name] = doc.components[kind][name];
  }
  if (doc.components.securitySchemes) components.securitySchemes = doc.components.securitySchemes;
  return components;
}

function pick(obj, keys) {
  const out = {};
  for (const k of keys) {
    if (!(k in obj)) throw new Error(`upstream has no ${k}`);
    out[k] = obj[k];
  }
  return out;
}

const sha = (buf) => createHash('sha256').update(buf).digest('hex');

if (process.argv[2]) {
  const here = dirname(fileURLToPath(import.meta.url));
  const [checkoutFile, webhooksFile] = process.argv.slice(2);
  const checkoutRaw = readFileSync(checkoutFile);
  const webhooksRaw = readFileSync(webhooksFile);
  const checkout = JSON.parse(checkoutRaw);
  const webhooks = JSON.parse(webhooksRaw);
  const paths = pick(checkout.paths, CHECKOUT_PATHS);
  const trimmedCheckout = { ...checkout, tags: undefined, paths, components: closure(checkout, paths) };
  delete trimmedCheckout.tags;
  const hooks = pick(webhooks.webhooks, WEBHOOKS);
  const trimmedWebhooks = { ...webhooks, webhooks: hooks, components: closure(webhooks, hooks) };
  delete trimmedWebhooks.tags;
  const outC = JSON.stringify(trimmedCheckout, null, 1) + '\n';
  const outW = JSON.stringify(trimmedWebhooks, null, 1) + '\n';
  writeFileSync(join(here, 'checkout-v71.trimmed.json'), outC);
  writeFileSync(join(here, 'webhooks-v1.trimmed.json'), outW);
  console.log(JSON.stringify({ checkoutUpstream: sha(checkoutRaw), webhooksUpstream: sha(webhooksRaw), checkoutTrimmed: sha(outC), webhooksTrimmed: sha(outW), sizes: [outC.length, outW.length] }, null, 1));
}
