import type { HookName, HookOutcome, HookScripts } from '../../ports/hook-scripts.js';

/**
 * Hook scripts for tests and embedders' policy tests: each hook is absent, succeeds or fails
 * as set (`set`), and every run is recorded (`runs`) with the order it came in.
 */
export class FakeHookScripts implements HookScripts {
  /** Every run, in order. */
  readonly runs: HookName[] = [];
  private readonly outcomes = new Map<HookName, HookOutcome>();

  constructor(initial: Readonly<Partial<Record<HookName, 'succeeds' | 'fails'>>> = {}) {
    for (const [name, how] of Object.entries(initial) as [HookName, 'succeeds' | 'fails'][]) this.set(name, how);
  }

  /** What `name` does from now on: succeeds, fails (with `why`), or is not configured (`absent`). */
  set(name: HookName, how: 'succeeds' | 'fails' | 'absent', why = 'exited with code 1'): void {
    if (how === 'absent') this.outcomes.delete(name);
    else this.outcomes.set(name, how === 'succeeds' ? { ran: true, ok: true } : { ran: true, ok: false, why });
  }

  async run(name: HookName): Promise<HookOutcome> {
    const outcome = this.outcomes.get(name) ?? { ran: false };
    if (outcome.ran) this.runs.push(name);
    return outcome;
  }
}
