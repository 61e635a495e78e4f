import { acceptFailsafePing, failsafeMembers } from '../../usecases/failsafe-ping.js';
import type { AgentApiDeps } from './api-deps.js';
import { readJsonObject } from './body.js';
import { setJsonBody } from './json-body.js';
import type { Handler, RouteTable } from './routes.js';
import { validateBody } from './schemas.js';

/**
 * `/failsafe`: while the DCS is unreachable in failsafe mode, the primary keeps running only
 * while every member confirms it by accepting its `POST /failsafe`; `GET` shows the members
 * the last DCS view named for failsafe mode.
 */
export function registerFailsafeRoutes(routes: RouteTable, deps: AgentApiDeps, guard: Handler): void {
  const agent = deps.control;
  routes.get('/failsafe', (ex) => {
    setJsonBody(ex, failsafeMembers({ agent }));
  });
  routes.add('/failsafe', ['POST'], guard, async (ex) => {
    setJsonBody(ex, acceptFailsafePing({ agent }, validateBody('failsafe', await readJsonObject(ex))));
  });
}
