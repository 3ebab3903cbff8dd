// Headers on every response of the API: the correlation id, and the security headers. Set by
// the onSend hook for everything Fastify answers, and written by hand on the raw responses to
// requests Fastify never saw (see plugins/errors.ts, clientError).
export function responseHeaders(url: string, correlationId: string): Record<string, string> {
  const headers: Record<string, string> = {
    'x-correlation-id': correlationId,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'strict-transport-security': 'max-age=31536000; includeSubDomains',
  };
  // The docs page sets its own policy (plugins/openapi.ts); everything else is JSON that no
  // browser should frame, run or cache.
  if (!url.startsWith('/v1/docs')) {
    // The hosted checkout page may be framed by its account's embed origins, which its own CSP
    // frame-ancestors lists (modules/checkout/pages.ts); X-Frame-Options cannot say a list.
    if (!url.startsWith('/checkout/')) headers['x-frame-options'] = 'DENY';
    headers['content-security-policy'] = "default-src 'none'; frame-ancestors 'none'";
    headers['cache-control'] = 'no-store';
  }
  return headers;
}

// How many times a request carries a header, from its raw headers: Node keeps only the first
// Authorization and joins repeated Idempotency-Keys with ", ", so neither tells.
export function countRawHeader(rawHeaders: string[], name: string): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) n++;
  return n;
}
