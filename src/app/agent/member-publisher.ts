import { memberToJson, type ScheduledRestart } from '../../domain/cluster/cluster.js';
import { walPosition, type LocalFacts } from '../../domain/cluster/facts.js';
import type { NodeSettings } from '../../domain/cluster/node.js';
import { stateText } from '../../domain/cluster/states.js';
import type { NodeStatus } from '../../domain/cluster/status.js';

/** The member key's JSON (spec §10) for this node's latest facts and status. */
export function memberKeyValue(node: NodeSettings, facts: LocalFacts, status: NodeStatus, scheduledRestart: ScheduledRestart | null): string {
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
  });
}
