import type { Router } from '@koa/router';
import type { Middleware } from 'koa';
import { acceptFailsafePing, failsafeMembers } from '../../usecases/failsafe-ping.js';
import type { AgentApiDeps } from './api-deps.js';
import { readJsonObject } from './body.js';
import { setJsonBody } from './json-body.js';
import { validateBody } from './schemas.js';

/**
 * `/failsafe`: while the DCS is unreachable in failsafe mode, the primary keeps running only
 * while every member confirms it by accepting its `POST /failsafe`; `GET` shows the members
 * the last DCS view named for failsafe mode.
 */
export function registerFailsafeRoutes(router: Router, deps: AgentApiDeps, guard: Middleware): void {
  const agent = deps.control;
  router.get('/failsafe', (ctx) => {
    setJsonBody(ctx, failsafeMembers({ agent }));
  });
  router.post('/failsafe', guard, async (ctx) => {
    setJsonBody(ctx, acceptFailsafePing({ agent }, validateBody('failsafe', await readJsonObject(ctx))));
  });
}
