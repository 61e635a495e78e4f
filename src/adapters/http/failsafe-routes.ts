import type { AgentApiDeps } from './api-deps.js';
import { readJsonObject } from './body.js';
import { sendError } from './errors.js';
import { setJsonBody } from './json-body.js';
import type { Route } from './routes.js';
import { validateBody } from './schemas.js';

/**
 * `/failsafe`: while the DCS is unreachable in failsafe mode, the primary keeps running only
 * while every member confirms it by accepting its `POST /failsafe`; `GET` shows the members
 * the last DCS view named for failsafe mode.
 */
export function failsafeRoutes(deps: AgentApiDeps): Route[] {
  const { control } = deps;
  return [
    {
      path: '/failsafe',
      methods: {
        GET: (ctx) => {
          const members = control.snapshot().cluster?.failsafe ?? null;
          if (members === null) sendError(ctx, 503, 'failsafe_unknown', 'no failsafe members are known (failsafe mode off, or no DCS view yet)');
          else setJsonBody(ctx, members);
        },
        POST: async (ctx) => {
          const body = validateBody('failsafe', await readJsonObject(ctx));
          if (!control.snapshot().config.failsafe_mode) {
            sendError(ctx, 503, 'failsafe_mode_disabled', 'failsafe mode is not enabled in the dynamic configuration');
          } else if (control.acceptFailsafe(body)) {
            setJsonBody(ctx, { message: 'Accepted' });
          } else {
            sendError(ctx, 409, 'failsafe_rejected', `failsafe ping from ${body.name} rejected: this node does not agree it is the leader`);
          }
        },
      },
    },
  ];
}
