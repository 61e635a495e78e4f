import type { Router } from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { ActionResult } from '../../ports/agent-control.js';
import { cancelScheduledRestart } from '../../usecases/cancel-restart.js';
import { cancelScheduledSwitchover } from '../../usecases/cancel-switchover.js';
import { failover } from '../../usecases/failover.js';
import type { ManualFailoverResult } from '../../usecases/manual-failover-flow.js';
import { reinitialize } from '../../usecases/reinitialize.js';
import { reload } from '../../usecases/reload.js';
import { restart } from '../../usecases/restart.js';
import { switchover } from '../../usecases/switchover.js';
import { commandDeps, type AgentApiDeps } from './api-deps.js';
import { readJsonObject } from './body.js';
import { sendError, statusOfCode } from './errors.js';
import { setJsonBody } from './json-body.js';
import { restartInput } from './restart-input.js';
import { validateBody, type SwitchoverBody } from './schemas.js';

/** Sends an agent command's outcome: `okStatus` with `{message}`, or its failure with `{error, message}`. */
function sendResult(ctx: Context, result: ActionResult, okStatus: number, okMessage?: string): void {
  if (result.ok) {
    ctx.status = okStatus;
    setJsonBody(ctx, { message: okMessage ?? result.message });
  } else {
    sendError(ctx, statusOfCode(result.error), result.error, result.message);
  }
}

/** Sends a switchover/failover outcome: 202 when scheduled, 200 when done. */
function sendManual(ctx: Context, result: ManualFailoverResult): void {
  ctx.status = result.kind === 'scheduled' ? 202 : 200;
  switch (result.kind) {
    case 'scheduled':
      return setJsonBody(ctx, { message: result.message, scheduled_at: result.scheduledAt });
    case 'done':
      return setJsonBody(ctx, { message: result.message, leader: result.leader });
    case 'dry_run':
      return setJsonBody(ctx, { message: result.message, dry_run: true, candidate: result.candidate, members: result.members });
  }
}

/** The request's fields as the use case takes them. */
function manualInput(body: SwitchoverBody) {
  return { leader: body.leader ?? null, candidate: body.candidate ?? null, scheduledAt: body.scheduled_at ?? null, dryRun: body.dry_run === true };
}

/**
 * `/switchover`, `/failover`, `/restart`, `/reload`, `/reinitialize`: each validates and
 * translates its request, runs its use case, and translates the result. `guard` (access
 * control) runs before each.
 */
export function registerActionRoutes(router: Router, deps: AgentApiDeps, guard: Middleware): void {
  const { control: agent, clock } = deps;
  router.post('/switchover', guard, async (ctx) => {
    const body = validateBody('switchover', await readJsonObject(ctx));
    sendManual(ctx, await switchover(commandDeps(deps), manualInput(body)));
  });
  router.delete('/switchover', guard, async (ctx) => {
    setJsonBody(ctx, await cancelScheduledSwitchover(commandDeps(deps)));
  });
  router.post('/failover', guard, async (ctx) => {
    const body = validateBody('failover', await readJsonObject(ctx));
    sendManual(ctx, await failover(commandDeps(deps), manualInput(body)));
  });
  router.post('/restart', guard, async (ctx) => {
    const body = validateBody('restart', await readJsonObject(ctx));
    const result = await restart({ agent, clock }, restartInput(body));
    if (result.kind === 'scheduled') {
      ctx.status = 202;
      setJsonBody(ctx, { message: result.message, schedule: result.schedule });
    } else {
      sendResult(ctx, result, 200);
    }
  });
  router.delete('/restart', guard, (ctx) => {
    setJsonBody(ctx, cancelScheduledRestart({ agent }));
  });
  router.post('/reload', guard, (ctx) => {
    ctx.status = 202;
    setJsonBody(ctx, reload({ agent }));
  });
  router.post('/reinitialize', guard, async (ctx) => {
    const body = validateBody('reinitialize', await readJsonObject(ctx));
    const input = { force: body.force === true, fromLeader: body['from-leader'] === true || body.from_leader === true };
    sendResult(ctx, await reinitialize({ agent, clock }, input), 200, 'reinitialize started');
  });
}
