import type { RunningJob } from '../../domain/cluster/ha/decision.js';
import type { Clock } from '../../ports/clock.js';

/**
 * Runs the long part of a decision (promote, demote, restart, basebackup, rewind...) in the
 * background, one job at a time, while ticks go on: a leader keeps renewing its lock during a
 * restart. The job reports the step it is on, and when it ends, whether it completed.
 */
export class JobRunner {
  private job: { readonly name: string; readonly startedAt: number; step: string; readonly mayWrite: boolean; readonly done: Promise<void> } | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly onFinished: (name: string, completed: boolean, mayWrite: boolean) => void,
  ) {}

  /** The job in progress as decide() sees it, or null. */
  get current(): RunningJob | null {
    const j = this.job;
    return j ? { name: j.name, startedAt: j.startedAt, step: j.step } : null;
  }

  /** Name of the job in progress, or null. */
  get name(): string | null {
    return this.job?.name ?? null;
  }

  /** Whether the job in progress can leave the server accepting writes (a promotion, a start or restart as primary). */
  get mayWrite(): boolean {
    return this.job?.mayWrite ?? false;
  }

  /** Starts `work` as the job `name`; `work` reports each step it begins and resolves with whether it completed. Call only when idle. */
  start(name: string, firstStep: string, mayWrite: boolean, work: (step: (s: string) => void) => Promise<boolean>): void {
    const state = { name, startedAt: this.clock.now(), step: firstStep, mayWrite };
    const done = work((s) => (state.step = s)).then(
      (completed) => this.finish(name, completed, mayWrite),
      () => this.finish(name, false, mayWrite),
    );
    this.job = Object.assign(state, { done });
  }

  /** Resolves when no job runs. */
  async idle(): Promise<void> {
    while (this.job) await this.job.done;
  }

  private finish(name: string, completed: boolean, mayWrite: boolean): void {
    this.job = null;
    this.onFinished(name, completed, mayWrite);
  }
}
