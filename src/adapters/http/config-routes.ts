import { patchConfig } from '../../usecases/patch-config.js';
import { readConfig } from '../../usecases/read-config.js';
import { replaceConfig } from '../../usecases/replace-config.js';
import type { AgentApiDeps } from './api-deps.js';
import { readJsonObject } from './body.js';
import { setJsonBody } from './json-body.js';
import { refuseQuery } from './query-check.js';
import type { Handler, RouteTable } from './routes.js';

/** `GET /config`, `PATCH /config` (merge, validate, compare-and-set), `PUT /config` (validate, replace). */
export function registerConfigRoutes(routes: RouteTable, deps: AgentApiDeps, guard: Handler): void {
  const ucDeps = { store: deps.store, agent: deps.control };
  routes.get('/config', async (ex) => {
    refuseQuery(ex);
    setJsonBody(ex, (await readConfig(ucDeps)).value);
  });
  routes.add('/config', ['PATCH'], guard, async (ex) => {
    setJsonBody(ex, await patchConfig(ucDeps, await readJsonObject(ex)));
  });
  routes.add('/config', ['PUT'], guard, async (ex) => {
    const config = await readJsonObject(ex, { required: 'PUT /config replaces the whole configuration; send it as a JSON object ({} resets every setting to its default)' });
    setJsonBody(ex, await replaceConfig(ucDeps, { config }));
  });
}
