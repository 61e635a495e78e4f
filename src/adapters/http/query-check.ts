import { ValidationError } from '../../domain/errors.js';
import type { Exchange } from './exchange.js';

/** Refuses a query on an endpoint that takes none: 400 `invalid_query` naming each parameter, as the health checks do. */
export function refuseQuery(ex: Exchange): void {
  if (ex.querystring === '') return;
  const keys = Object.keys(ex.query);
  if (keys.length === 0) return;
  throw new ValidationError(
    keys.map((k) => ({ path: k, message: 'unknown query parameter (this endpoint takes none)' })),
    'invalid_query',
  );
}
