import type { Context } from 'koa';
import { holdsLeaderLock } from '../../domain/cluster/rules/health.js';
import type { ManualAction } from '../../domain/cluster/rules/manual-failover.js';
import type { ActionResult } from '../../ports/agent-control.js';
import type { AgentApiDeps } from './api-deps.js';
import { readJsonObject } from './body.js';
import { actionFailureStatus, sendError } from './errors.js';
import { setJsonBody } from './json-body.js';
import { restartRequest } from './restart-request.js';
import type { Route } from './routes.js';
import { validateBody } from './schemas.js';
import { cancelScheduledSwitchover, requestManualFailover, type ActionResponse } from './switchover.js';

function respond(ctx: Context, res: ActionResponse): void {
  ctx.status = res.status;
  setJsonBody(ctx, res.body);
}

/** Sends an AgentControl result: `okStatus` with `{message}`, or the failure's status with `{error, message}`. */
function respondResult(ctx: Context, result: ActionResult, okStatus: number, okMessage?: string): void {
  if (result.ok) {
    ctx.status = okStatus;
    setJsonBody(ctx, { message: okMessage ?? result.message });
  } else {
    sendError(ctx, actionFailureStatus(result.error), result.error, result.message);
  }
}

/** `/switchover`, `/failover`, `/restart`, `/reload`, `/reinitialize` (spec §7). Access control runs before these. */
export function actionRoutes(deps: AgentApiDeps): Route[] {
  const { control, clock } = deps;
  const manual = (action: ManualAction) => async (ctx: Context) => {
    const body = validateBody(action, await readJsonObject(ctx));
    respond(ctx, await requestManualFailover(deps, action, body));
  };
  return [
    {
      path: '/switchover',
      methods: {
        POST: manual('switchover'),
        DELETE: async (ctx) => respond(ctx, await cancelScheduledSwitchover(deps)),
      },
    },
    { path: '/failover', methods: { POST: manual('failover') } },
    {
      path: '/restart',
      methods: {
        POST: async (ctx) => {
          const body = validateBody('restart', await readJsonObject(ctx));
          const req = restartRequest(body, control.snapshot().config.pause, clock.now());
          const result = await control.restart(req);
          if (result.ok) {
            ctx.status = result.scheduled ? 202 : 200;
            setJsonBody(ctx, result.scheduled ? { message: result.message, schedule: req.schedule } : { message: result.message });
          } else {
            sendError(ctx, actionFailureStatus(result.error), result.error, result.message);
          }
        },
        DELETE: async (ctx) => {
          if (await control.cancelScheduledRestart()) {
            setJsonBody(ctx, { message: 'scheduled restart deleted' });
          } else {
            sendError(ctx, 404, 'not_scheduled', 'no restart is scheduled');
          }
        },
      },
    },
    {
      path: '/reload',
      methods: {
        POST: async (ctx) => respondResult(ctx, await control.reload(), 202, 'reload scheduled'),
      },
    },
    {
      path: '/reinitialize',
      methods: {
        POST: async (ctx) => {
          const body = validateBody('reinitialize', await readJsonObject(ctx));
          const force = body.force === true;
          const snap = control.snapshot();
          const leader = snap.cluster?.leader?.name ?? null;
          if (snap.status.role === 'primary' || snap.status.role === 'standby_leader' || holdsLeaderLock(snap, clock.now()) || leader === snap.node.name) {
            sendError(ctx, 503, 'is_leader', 'reinitialize is not allowed on the leader; it is for replicas only');
            return;
          }
          if (leader === null) {
            sendError(ctx, 503, 'no_leader', 'reinitialize is not possible: the cluster has no leader to copy from');
            return;
          }
          const result = await control.reinitialize({ force, fromLeader: body['from-leader'] === true || body.from_leader === true });
          respondResult(ctx, result, 200, 'reinitialize started');
        },
      },
    },
  ];
}
