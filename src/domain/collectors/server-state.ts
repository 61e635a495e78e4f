import type { ServerRole } from './select.js';

/** The one word the role endpoints answer with. */
export type ServerStatus = ServerRole | 'starting' | 'down';

/** What the background probe (and each scrape) last learned about the server. */
export interface ServerState {
  readonly status: ServerStatus;
  /** Last known server_version_num (kept while down). */
  readonly version: number | null;
  /** Monotonic ms of the last check. */
  readonly checkedAt: number;
  readonly error: string | null;
}

/** True when the server answers queries. */
export function isUp(s: ServerState): s is ServerState & { status: ServerRole } {
  return s.status === 'primary' || s.status === 'replica';
}
