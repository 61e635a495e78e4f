import type { Clock } from '../ports/clock.js';
import type { ClusterChange, ClusterStore } from '../ports/cluster-store.js';

/** Changes that can settle a request; a resync is a watch (re)connecting, after which changes may have been missed. */
const OUTCOME_KINDS: ReadonlySet<ClusterChange['kind']> = new Set(['leader', 'failover', 'resync']);

/**
 * Cuts a waiting request's sleep short when the leader or the request changes, through a
 * watch taken before the request is written: the outcome is then read within milliseconds
 * of the change instead of at the next poll.
 */
export class OutcomeWatch {
  private ctl = new AbortController();
  private readonly unwatch: () => void;

  constructor(store: ClusterStore) {
    this.unwatch = store.watch((change) => {
      if (OUTCOME_KINDS.has(change.kind)) this.ctl.abort();
    });
  }

  /** Sleeps up to `ms`, less when a change arrived meanwhile (or since the last sleep). */
  async sleep(clock: Clock, ms: number): Promise<void> {
    await clock.sleep(ms, this.ctl.signal);
    // A change during the read that follows must cut the next sleep short too.
    if (this.ctl.signal.aborted) this.ctl = new AbortController();
  }

  close(): void {
    this.unwatch();
  }
}
