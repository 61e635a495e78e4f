import type { Cluster, Member } from '../../domain/cluster/model/cluster.js';
import type { DynamicConfig } from '../../domain/cluster/config/config.js';
import { tagIsTrue } from '../../domain/cluster/model/node.js';
import { WardenError } from '../../domain/errors.js';
import type { CommandDeps } from '../../usecases/command-deps.js';
import { switchover } from '../../usecases/switchover.js';
import { describe } from './action-runner.js';

/** The tag that marks the member that should lead whenever it can. */
export const PREFERRED_TAG = 'preferred';

/**
 * Whether `m` is healthy and caught up as the leader's replica: running, streaming, and
 * within `maximum_lag_on_failover` of the leader's last position (from its member record).
 */
export function caughtUp(m: Member, cluster: Cluster, config: DynamicConfig): boolean {
  if (m.state !== 'running' || m.role !== 'replica' || m.replicationState !== 'streaming') return false;
  const optime = cluster.status?.optime ?? null;
  const pos = Math.max(m.replayLsn ?? -1, m.receiveLsn ?? -1);
  if (optime === null || pos < 0) return false;
  return optime - pos <= config.maximum_lag_on_failover;
}

/**
 * Gives leadership back to a member tagged `preferred: true`: while this node leads (and is
 * not itself preferred), a preferred member that has been healthy and caught up for
 * `preferred_leader_delay` seconds gets a switchover, through the same command (and checks)
 * as an operator's. Never while paused, never while a request is pending, one attempt at a
 * time, and a refused or failed attempt waits another delay. Runs beside the HA loop: the
 * loop never waits for it.
 */
export class PreferredLeader {
  private since = new Map<string, number>();
  private inFlight: Promise<void> | null = null;
  private notBefore = 0;

  constructor(
    private readonly deps: CommandDeps,
    private readonly me: () => string,
  ) {}

  /** After each tick: `cluster` as last read, whether this node holds the leader lock. */
  check(cluster: Cluster | null, config: DynamicConfig, isLeader: boolean, myTags: Readonly<Record<string, unknown>>): void {
    const now = this.deps.clock.now();
    const me = this.me();
    if (cluster === null || !isLeader || config.pause || cluster.failover !== null || cluster.leader?.name !== me || tagIsTrue(myTags as never, PREFERRED_TAG)) {
      this.since.clear();
      return;
    }
    const ready = cluster.members.filter((m) => m.name !== me && tagIsTrue(m.tags, PREFERRED_TAG) && caughtUp(m, cluster, config));
    for (const name of [...this.since.keys()]) if (!ready.some((m) => m.name === name)) this.since.delete(name);
    for (const m of ready) if (!this.since.has(m.name)) this.since.set(m.name, now);
    if (this.inFlight !== null || now < this.notBefore) return;
    const delayMs = config.preferred_leader_delay * 1000;
    const due = [...this.since].filter(([, at]) => now - at >= delayMs).map(([name]) => name).sort();
    const target = due[0];
    if (target === undefined) return;
    this.inFlight = this.switchTo(target, me, delayMs).finally(() => {
      this.inFlight = null;
    });
  }

  /** Resolves when no attempt is in flight (tests, shutdown). */
  async idle(): Promise<void> {
    await this.inFlight;
  }

  private async switchTo(target: string, me: string, delayMs: number): Promise<void> {
    const { events, logger, clock } = this.deps;
    const secs = Math.round(delayMs / 1000);
    events?.emit('preferred_leader_switchover', `${target} is tagged preferred and has been healthy and caught up for ${secs} s: switching over from ${me}`, { candidate: target });
    try {
      const result = await switchover(this.deps, { leader: me, candidate: target, scheduledAt: null });
      logger.info(`preferred leader: ${result.message}`);
      this.since.clear();
    } catch (error) {
      // The refusal or failure was reported by the command; wait a full delay before trying again.
      this.notBefore = clock.now() + Math.max(delayMs, 10_000);
      logger.warn(`preferred leader: the switchover to ${target} did not happen`, { error: error instanceof WardenError ? `${error.code}: ${error.message}` : describe(error) });
    }
  }
}
