import type { Router } from '@koa/router';
import type { Middleware } from 'koa';
import { patchConfig } from '../../usecases/patch-config.js';
import { readConfig } from '../../usecases/read-config.js';
import { replaceConfig } from '../../usecases/replace-config.js';
import type { AgentApiDeps } from './api-deps.js';
import { readJsonObject } from './body.js';
import { setJsonBody } from './json-body.js';

/** `GET /config`, `PATCH /config` (merge, validate, compare-and-set), `PUT /config` (validate, replace). */
export function registerConfigRoutes(router: Router, deps: AgentApiDeps, guard: Middleware): void {
  const ucDeps = { store: deps.store, agent: deps.control };
  router.get('/config', async (ctx) => {
    setJsonBody(ctx, (await readConfig(ucDeps)).value);
  });
  router.patch('/config', guard, async (ctx) => {
    setJsonBody(ctx, await patchConfig(ucDeps, await readJsonObject(ctx)));
  });
  router.put('/config', guard, async (ctx) => {
    setJsonBody(ctx, await replaceConfig(ucDeps, { config: await readJsonObject(ctx) }));
  });
}
