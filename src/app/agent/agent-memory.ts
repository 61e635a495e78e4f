import { EMPTY_MEMORY, type LoopMemory } from '../../domain/cluster/ha/decision.js';

/**
 * What the agent remembers between ticks (decide() reads it as `memory` and changes it
 * through `remember` actions), plus the watchdog's last known state.
 */
export class AgentMemory {
  private current: LoopMemory = EMPTY_MEMORY;
  /** Last known result of watchdog.isUsable() / activate(). */
  watchdogUsable = true;

  /** The memory as decide() sees it (frozen). */
  get memory(): LoopMemory {
    return this.current;
  }

  /** Applies a `remember` patch. */
  remember(patch: Partial<LoopMemory>): void {
    this.current = Object.freeze({ ...this.current, ...patch });
  }
}
