import type { RunningJob } from '../../domain/cluster/ha/decision.js';
import type { Clock } from '../../ports/clock.js';

/**
 * Runs the long part of a decision (promote, demote, restart, basebackup, rewind...) in the
 * background, one job at a time, while ticks go on: a leader keeps renewing its lock during a
 * restart. The job reports the step it is on, and when it ends, whether it completed.
 */
export class JobRunner {
  private job: { readonly name: string; readonly startedAt: number; step: string; mayWrite: boolean; readonly done: Promise<void> } | null = null;

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

  /**
   * Whether the job in progress has begun a step that can leave the server accepting writes (a
   * promotion, a start or restart as primary): before it, the server cannot become writable
   * whatever becomes of the job (a fencing script that refuses, a sync key that cannot be written).
   */
  get mayWrite(): boolean {
    return this.job?.mayWrite ?? false;
  }

  /**
   * Starts `work` as the job `name`; `work` reports each step it begins (and whether that step can
   * leave the server writable) and resolves with whether it completed. Call only when idle.
   */
  start(name: string, firstStep: string, work: (step: (s: string, writes?: boolean) => void) => Promise<boolean>): void {
    const state = { name, startedAt: this.clock.now(), step: firstStep, mayWrite: false };
    const done = work((s, writes) => {
      state.step = s;
      if (writes === true) state.mayWrite = true;
    }).then(
      (completed) => this.finish(name, completed, state.mayWrite),
      () => this.finish(name, false, state.mayWrite),
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
