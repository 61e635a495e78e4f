import type { ServerStatus } from './server-state.js';

/** The three kinds of routing check: any usable server, the primary, a replica. */
export type RoleCheck = 'up' | 'primary' | 'replica';

/** HTTP status of a routing check: 200 when the server fits, 404 when it is up in the other role, 503 when it is not up. */
export function roleCheckStatus(check: RoleCheck, status: ServerStatus): 200 | 404 | 503 {
  if (status !== 'primary' && status !== 'replica') return 503;
  if (check === 'up') return 200;
  return check === status ? 200 : 404;
}

/** Every path of the routing checks and the check each one runs (seed: aliases included). */
export const ROLE_CHECK_PATHS: Readonly<Record<string, RoleCheck>> = {
  '/up': 'up',
  '/health': 'up',
  '/read': 'up',
  '/primary': 'primary',
  '/leader': 'primary',
  '/master': 'primary',
  '/read-write': 'primary',
  '/rw': 'primary',
  '/replica': 'replica',
  '/standby': 'replica',
  '/slave': 'replica',
  '/read-only': 'replica',
  '/ro': 'replica',
};
