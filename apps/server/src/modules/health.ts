import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/index.js';
import { ApiError } from '../errors.js';

export function healthRoutes(app: FastifyInstance, store: Store, isShuttingDown: () => boolean): void {
  // Liveness: the process answers. Never touches the store, so a slow database does not get
  // healthy processes restarted.
  app.get('/healthz', { config: { auth: 'none' }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  // Readiness: the store answers and we are not draining.
  app.get('/readyz', { config: { auth: 'none' }, schema: { hide: true } }, async () => {
    if (isShuttingDown()) throw new ApiError('SERVICE_UNAVAILABLE', 'This instance is shutting down; retry on another.');
    try {
      await store.ping();
    } catch {
      throw new ApiError('SERVICE_UNAVAILABLE', 'The store is not reachable.');
    }
    return { status: 'ready', engine: store.engine };
  });
}
