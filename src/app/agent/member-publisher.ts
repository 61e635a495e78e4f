import { memberToJson, type ScheduledRestart } from '../../domain/cluster/model/cluster.js';
import { walPosition, type LocalFacts } from '../../domain/cluster/model/facts.js';
import type { NodeSettings } from '../../domain/cluster/model/node.js';
import { DcsKey } from '../../domain/cluster/model/dcs-keys.js';
import { stateText } from '../../domain/cluster/model/states.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import type { Dcs } from '../../ports/dcs.js';
import type { Logger } from '../../ports/logger.js';

/**
 * The member key's JSON (spec §10) for this node's latest facts and status, plus
 * `checkpoint_after_promote` while a promotion's checkpoint is pending or just done
 * (rewinders wait for it: pg_rewind reads the new timeline from the control file).
 */
export function memberKeyValue(
  node: NodeSettings,
  facts: LocalFacts,
  status: NodeStatus,
  scheduledRestart: ScheduledRestart | null,
  checkpointAfterPromote: boolean | null = null,
): string {
  const replica = facts.running && facts.inRecovery === true;
  return memberToJson({
    connUrl: node.connUrl,
    apiUrl: node.apiUrl,
    state: stateText(facts.state),
    role: status.role,
    version: node.svcVersion,
    xlogLocation: walPosition(facts),
    receiveLsn: replica ? facts.receivedLocation : null,
    replayLsn: replica ? facts.replayedLocation : null,
    replicationState: replica ? facts.replicationState : null,
    timeline: facts.timeline,
    tags: node.tags,
    pendingRestart: facts.pendingRestart,
    pendingRestartReason: facts.pendingRestart ? facts.pendingRestartReason : null,
    scheduledRestart,
    ...(checkpointAfterPromote === null ? {} : { checkpointAfterPromote }),
  });
}

/**
 * Keeps this node's member key on its lease: the lease is renewed every tick, the key is
 * written only when its value changed, the lease was recreated, or the key went missing.
 */
export class MemberPublisher {
  private published: string | null = null;

  constructor(
    private readonly dcs: Dcs,
    private readonly logger: Logger,
  ) {}

  /** Renews the lease and writes `value` when needed; false when the DCS failed. */
  async publish(name: string, value: string, ttlSeconds: number, listed: boolean): Promise<boolean> {
    try {
      const leaseKept = await this.dcs.keepAlive(ttlSeconds);
      if (leaseKept && listed && value === this.published) return true;
      this.published = null;
      await this.dcs.put(DcsKey.member(name), value, { leased: true });
      this.published = value;
      return true;
    } catch (error) {
      this.logger.warn('could not publish the member key', { error: error instanceof Error ? error.message : String(error) });
      return false;
    }
  }
}
