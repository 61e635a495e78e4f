import type { DatabaseState } from '../../domain/cluster/model/states.js';

/** What one probe saw of the postmaster. */
export interface ProcessView {
  /** A live postmaster owns postmaster.pid. */
  readonly alive: boolean;
  /** postmaster.pid exists (alive or stale). */
  readonly pidFile: boolean;
  /** The server answered the observation query. */
  readonly answered: boolean;
  /** The server refused connections with "cannot connect now" (starting, or reinitializing after a crash). */
  readonly refusing: boolean;
}

/** States in which we believe a postmaster is (or is becoming) up. */
const EXPECTS_SERVER: ReadonlySet<DatabaseState> = new Set(['running', 'starting', 'restarting', 'bootstrap_starting']);

/**
 * The process state of the API's table (15 states). Operations set it; between operations
 * each probe reconciles it with what the process table shows, which is how a crash (a dead
 * postmaster behind a stale postmaster.pid) or an outside start/stop is noticed.
 */
export class PgStateTracker {
  private state: DatabaseState = 'stopped';
  private known = false;
  private operations = 0;

  /** The state to report. */
  get current(): DatabaseState {
    return this.state;
  }

  /** Sets the state (operations only). */
  set(state: DatabaseState): void {
    this.state = state;
    this.known = true;
  }

  /** An operation owns the state until endOperation(). */
  beginOperation(): void {
    this.operations++;
  }

  /** Whether an operation (initdb, a copy, a start...) is running. */
  get operating(): boolean {
    return this.operations > 0;
  }

  endOperation(): void {
    this.operations--;
  }

  /** Reconciles with a probe's view (unless an operation is running) and returns the state. */
  observed(v: ProcessView): DatabaseState {
    if (this.operations > 0) return this.state;
    const next = this.known ? this.transition(v) : this.initial(v);
    this.set(next);
    return next;
  }

  /** First look (agent just started): infer from the process table alone. */
  private initial(v: ProcessView): DatabaseState {
    if (v.alive) return v.answered ? 'running' : 'starting';
    return v.pidFile ? 'crashed' : 'stopped';
  }

  private transition(v: ProcessView): DatabaseState {
    const s = this.state;
    if (v.alive && v.answered) return 'running';
    if (v.alive) {
      // a running postmaster that refuses connections is reinitializing after a backend crash
      if (s === 'running' && v.refusing) return 'crashed';
      if (s === 'stopped' || s === 'crashed') return 'starting';
      return s;
    }
    if (EXPECTS_SERVER.has(s)) return v.pidFile ? 'crashed' : 'stopped';
    if (s === 'stopping' || s === 'stop_failed') return 'stopped';
    return s;
  }
}
