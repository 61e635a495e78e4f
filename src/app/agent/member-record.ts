import type { ScheduledRestart } from '../../domain/cluster/model/cluster.js';
import { walPosition, type LocalFacts } from '../../domain/cluster/model/facts.js';
import type { NodeSettings } from '../../domain/cluster/model/node.js';
import { stateText } from '../../domain/cluster/model/states.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import type { MemberRecord } from '../../ports/cluster-store.js';

/** What a member record carries besides the node's settings, facts and status. */
export interface MemberRecordExtras {
  readonly scheduledRestart: ScheduledRestart | null;
  /** While a promotion's checkpoint is pending or just done (rewinders wait for it: pg_rewind reads the new timeline from the control file). */
  readonly checkpointAfterPromote?: boolean | null;
  /** watchdog.safety_margin (s) where a fencer or watchdog device stops PostgreSQL on the lock's deadline: a configuration change that would fence this member is refused. */
  readonly safetyMargin?: number | null;
}

/** What this node publishes about itself for its latest facts and status. */
export function memberRecord(node: NodeSettings, facts: LocalFacts, status: NodeStatus, extras: MemberRecordExtras): MemberRecord {
  const { scheduledRestart, checkpointAfterPromote = null, safetyMargin = null } = extras;
  const replica = facts.running && facts.inRecovery === true;
  return {
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
    ...(facts.running && facts.serverVersion !== null ? { serverVersion: facts.serverVersion } : {}),
    ...(safetyMargin === null ? {} : { safetyMargin }),
  };
}
