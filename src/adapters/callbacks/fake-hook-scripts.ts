import type { HookName, HookOutcome, HookScripts } from '../../ports/hook-scripts.js';

/**
 * Hook scripts for tests and embedders' policy tests: each hook is absent, succeeds, fails or
 * hangs (never ends: to stop an agent while its script runs) as set (`set`), and every run is
 * recorded (`runs`) with the order it came in.
 */
export class FakeHookScripts implements HookScripts {
  /** Every run, in order. */
  readonly runs: HookName[] = [];
  private readonly outcomes = new Map<HookName, HookOutcome | 'hangs'>();

  constructor(initial: Readonly<Partial<Record<HookName, 'succeeds' | 'fails' | 'hangs'>>> = {}) {
    for (const [name, how] of Object.entries(initial) as [HookName, 'succeeds' | 'fails' | 'hangs'][]) this.set(name, how);
  }

  /** What `name` does from now on: succeeds, fails (with `why`), hangs, or is not configured (`absent`). */
  set(name: HookName, how: 'succeeds' | 'fails' | 'hangs' | 'absent', why = 'exited with code 1'): void {
    if (how === 'absent') this.outcomes.delete(name);
    else this.outcomes.set(name, how === 'hangs' ? how : how === 'succeeds' ? { ran: true, ok: true } : { ran: true, ok: false, why });
  }

  async run(name: HookName): Promise<HookOutcome> {
    const outcome = this.outcomes.get(name) ?? { ran: false };
    if (outcome === 'hangs') {
      this.runs.push(name);
      return new Promise<never>(() => undefined);
    }
    if (outcome.ran) this.runs.push(name);
    return outcome;
  }
}
