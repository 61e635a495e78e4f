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
import type { Exchange } from './exchange.js';
import type { Handler, RouteTable } from './routes.js';
import { validateBody, type SwitchoverBody } from './schemas.js';

/** Sends an agent command's outcome: `okStatus` with `{message}`, or its failure with `{error, message}`. */
function sendResult(ex: Exchange, result: ActionResult, okStatus: number, okMessage?: string): void {
  if (result.ok) setJsonBody(ex, { message: okMessage ?? result.message }, okStatus);
  else sendError(ex, statusOfCode(result.error), result.error, result.message);
}

/** Sends a switchover/failover outcome: 202 when scheduled, 200 when done. */
function sendManual(ex: Exchange, result: ManualFailoverResult): void {
  switch (result.kind) {
    case 'scheduled':
      return setJsonBody(ex, { message: result.message, scheduled_at: result.scheduledAt }, 202);
    case 'done':
      return setJsonBody(ex, { message: result.message, leader: result.leader }, 200);
    case 'dry_run':
      return setJsonBody(ex, { message: result.message, dry_run: true, candidate: result.candidate, members: result.members }, 200);
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
export function registerActionRoutes(routes: RouteTable, deps: AgentApiDeps, guard: Handler): void {
  const { control: agent, clock } = deps;
  routes.add('/switchover', ['POST'], guard, async (ex) => {
    const body = validateBody('switchover', await readJsonObject(ex));
    sendManual(ex, await switchover(commandDeps(deps), manualInput(body)));
  });
  routes.add('/switchover', ['DELETE'], guard, async (ex) => {
    validateBody('noFields', await readJsonObject(ex));
    setJsonBody(ex, await cancelScheduledSwitchover(commandDeps(deps)));
  });
  routes.add('/failover', ['POST'], guard, async (ex) => {
    const body = validateBody('failover', await readJsonObject(ex));
    sendManual(ex, await failover(commandDeps(deps), manualInput(body)));
  });
  routes.add('/restart', ['POST'], guard, async (ex) => {
    const body = validateBody('restart', await readJsonObject(ex));
    const result = await restart({ agent, clock }, restartInput(body));
    if (result.kind === 'scheduled') {
      setJsonBody(ex, { message: result.message, schedule: result.schedule }, 202);
    } else {
      sendResult(ex, result, 200);
    }
  });
  routes.add('/restart', ['DELETE'], guard, async (ex) => {
    validateBody('noFields', await readJsonObject(ex));
    setJsonBody(ex, cancelScheduledRestart({ agent }));
  });
  routes.add('/reload', ['POST'], guard, async (ex) => {
    validateBody('noFields', await readJsonObject(ex));
    setJsonBody(ex, await reload({ agent }), 202);
  });
  routes.add('/reinitialize', ['POST'], guard, async (ex) => {
    const body = validateBody('reinitialize', await readJsonObject(ex));
    const input = { force: body.force === true, fromLeader: body['from-leader'] === true || body.from_leader === true };
    sendResult(ex, await reinitialize({ agent, clock }, input), 200, 'reinitialize started');
  });
}
