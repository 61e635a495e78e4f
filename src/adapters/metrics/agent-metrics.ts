import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { NodeSnapshot } from '../../domain/cluster/model/snapshot.js';
import { stateMetricHelp } from '../../domain/cluster/model/states.js';
import type { AgentMetricsSink, MeasuredOperation } from '../../ports/agent-metrics.js';
import { snapshotMetricValues, SNAPSHOT_METRICS } from './agent-snapshot-metrics.js';

const LABELS = ['scope', 'name'] as const;

/** Buckets of the operation durations: from a fast switchover (sub-second) to a long base backup. */
const DURATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 900, 3600];

/** HELP of each duration histogram. */
const DURATION_HELP: Readonly<Record<MeasuredOperation, string>> = {
  failover: 'Failovers this node completed, from the leader key seen gone to this node writable, in seconds.',
  switchover: 'Switchovers and manual failovers to this node, from the request seen to this node writable, in seconds.',
  demote: 'Demotions of this node (stop as primary, start as replica), in seconds.',
  promote: 'Promotions of this node (pg_ctl promote until writable), in seconds.',
  rewind: 'pg_rewind runs of this node, in seconds.',
  fencing: 'Fencing stops of this node reported by its fencer, in seconds.',
  basebackup: 'Base backups (replica creation) of this node, in seconds.',
};
type Labels = { scope: string; name: string };

/**
 * The agent's Prometheus registry (spec §9): the `svc_*` node metrics, read from the latest
 * snapshot at scrape time, and the agent's own loop, DCS-error and leader-change metrics,
 * fed through AgentMetricsSink. One private registry per agent, so embedding two agents in
 * one process (tests) keeps their series apart.
 */
export class AgentMetrics implements AgentMetricsSink {
  readonly registry = new Registry();
  private readonly gauges = new Map<string, Gauge<'scope' | 'name'>>();
  private readonly counters = new Map<string, Counter<'scope' | 'name'>>();
  private readonly loopDuration: Histogram<'scope' | 'name'>;
  private readonly dcsErrors: Counter<'scope' | 'name' | 'operation'>;
  private readonly leaderChanges: Counter<'scope' | 'name'>;
  private readonly self: Labels;
  private readonly durations = new Map<MeasuredOperation, Histogram<'scope' | 'name'>>();
  private readonly refused: Counter<'scope' | 'name' | 'operation' | 'reason'>;
  private readonly callbackFailures: Counter<'scope' | 'name' | 'action'>;

  constructor(labels: Labels) {
    this.self = { scope: labels.scope, name: labels.name };
    for (const def of SNAPSHOT_METRICS) {
      const help = def.name === 'svc_database_state' ? stateMetricHelp() : def.help;
      const common = { name: def.name, help, labelNames: LABELS, registers: [this.registry] };
      if (def.type === 'counter') this.counters.set(def.name, new Counter(common));
      else this.gauges.set(def.name, new Gauge(common));
    }
    this.loopDuration = new Histogram({
      name: 'svc_loop_duration_seconds',
      help: 'Duration of one HA loop run in seconds.',
      labelNames: LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    this.dcsErrors = new Counter({
      name: 'svc_dcs_errors_total',
      help: 'DCS calls of the HA loop that failed, by operation.',
      labelNames: [...LABELS, 'operation'],
      registers: [this.registry],
    });
    this.leaderChanges = new Counter({
      name: 'svc_leader_changes_total',
      help: 'Changes of the leader key seen by this agent (including the cluster becoming leaderless).',
      labelNames: LABELS,
      registers: [this.registry],
    });
    for (const [op, help] of Object.entries(DURATION_HELP) as [MeasuredOperation, string][]) {
      this.durations.set(
        op,
        new Histogram({ name: `svc_${op}_duration_seconds`, help, labelNames: LABELS, buckets: DURATION_BUCKETS, registers: [this.registry] }),
      );
    }
    this.refused = new Counter({
      name: 'svc_refused_operations_total',
      help: 'Operator requests (switchover, failover) this agent refused, by operation and reason code.',
      labelNames: [...LABELS, 'operation', 'reason'],
      registers: [this.registry],
    });
    this.callbackFailures = new Counter({
      name: 'svc_callback_failures_total',
      help: 'Callback commands (on_start, on_stop, on_restart, on_reload, on_role_change) that failed, timed out or could not start.',
      labelNames: [...LABELS, 'action'],
      registers: [this.registry],
    });
    for (const h of this.durations.values()) h.zero(this.self);
    // Series exist from the start, so rate() works before the first event.
    this.loopDuration.zero(this.self);
    this.leaderChanges.inc(this.self, 0);
  }

  /** Content type of `render()`'s output. */
  get contentType(): string {
    return this.registry.contentType;
  }

  loopCompleted(seconds: number): void {
    if (Number.isFinite(seconds) && seconds >= 0) this.loopDuration.observe(this.self, seconds);
  }

  dcsError(operation: string): void {
    this.dcsErrors.inc({ ...this.self, operation });
  }

  leaderChanged(_leader: string | null): void {
    this.leaderChanges.inc(this.self);
  }

  operationDuration(operation: MeasuredOperation, seconds: number): void {
    if (Number.isFinite(seconds) && seconds >= 0) this.durations.get(operation)?.observe(this.self, seconds);
  }

  operationRefused(operation: string, reason: string): void {
    this.refused.inc({ ...this.self, operation, reason });
  }

  callbackFailed(action: string): void {
    this.callbackFailures.inc({ ...this.self, action });
  }

  /** Prometheus text of every metric, the node metrics taken from `snap`. */
  async render(snap: NodeSnapshot): Promise<string> {
    const labels: Labels = { scope: snap.node.scope, name: snap.node.name };
    const values = snapshotMetricValues(snap);
    for (const [name, gauge] of this.gauges) {
      gauge.reset();
      gauge.set(labels, values[name] ?? 0);
    }
    for (const [name, counter] of this.counters) {
      // Positions are absolute readings exposed as counters (they only grow), so the series is rebuilt from the value.
      counter.reset();
      counter.inc(labels, Math.max(0, values[name] ?? 0));
    }
    return this.registry.metrics();
  }
}
