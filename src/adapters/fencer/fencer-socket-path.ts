import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Where the fencer of a data directory listens when the configuration names no socket: one
 * path per data directory (the socket is the fencer's claim on it), short enough for a Unix
 * socket address.
 */
export function defaultFencerSocket(scope: string, name: string, dataDir: string): string {
  const hash = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 10);
  const label = `${scope}-${name}`.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);
  return join(tmpdir(), `warden-fencer-${label}-${hash}.sock`);
}
