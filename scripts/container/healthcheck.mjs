// The image's health check: GET /readyz (the store answers, not just the process) on this
// container's PORT. The image has no curl; Node's fetch is enough. Exit 0 healthy, 1 not.
const port = process.env.PORT || '3000';
const timeout = AbortSignal.timeout(4000);
fetch(`http://127.0.0.1:${port}/readyz`, { signal: timeout }).then(
  (response) => process.exit(response.ok ? 0 : 1),
  () => process.exit(1),
);
