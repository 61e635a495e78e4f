import { EMPTY_MEMORY, type LoopMemory } from '../../domain/cluster/ha/decision.js';
import type { ActionResult } from '../../ports/agent-control.js';

/** A command an API call is waiting on. */
export interface CommandWaiter {
  readonly id: number;
  readonly resolve: (result: ActionResult) => void;
}

/**
 * The HA loop's mutable state, shared by the loop and the action runner. Only the loop's
 * own code touches it (ticks are serialized; a background job and a tick interleave only
 * at awaits, and each field is written as a whole).
 */
export class LoopState {
  memory: LoopMemory = EMPTY_MEMORY;
  /** Our own leader-lock deadline, epoch ms (start of the last successful acquire/refresh + ttl). */
  lockDeadline: number | null = null;
  /** An action found the lock lost: decide again at once. */
  lockLostAt: number | null = null;
  /** Start of the last failsafe round (its success extends the lock from there). */
  failsafeRoundStartedAt: number | null = null;
  /** Last known result of watchdog.isUsable() / activate(). */
  watchdogUsable = true;
  /** API calls waiting for a command's outcome, by command id. */
  readonly waiters = new Map<number, CommandWaiter>();

  /** Applies a `remember` patch. */
  remember(patch: Partial<LoopMemory>): void {
    this.memory = Object.freeze({ ...this.memory, ...patch });
  }

  /** Answers a waiting API call (no-op when nobody waits on `id`). */
  resolveCommand(id: number, result: ActionResult): void {
    const w = this.waiters.get(id);
    if (!w) return;
    this.waiters.delete(id);
    w.resolve(result);
  }
}
