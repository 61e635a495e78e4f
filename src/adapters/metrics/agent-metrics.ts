import type { NodeSnapshot } from '../../domain/cluster/model/snapshot.js';
import { MANUAL_ACTIONS, MANUAL_REQUEST_REFUSAL_CODES } from '../../domain/cluster/rules/manual-failover.js';
import { stateMetricHelp } from '../../domain/cluster/model/states.js';
import type { AgentMetricsSink, MeasuredOperation } from '../../ports/agent-metrics.js';
import type { CallbackAction } from '../../ports/callbacks.js';
import type { HookName } from '../../ports/hook-scripts.js';
import { snapshotMetricValues, SNAPSHOT_METRICS } from './agent-snapshot-metrics.js';
import { DCS_OPERATIONS } from './dcs-operations.js';
import type { EventLoopDelaySource } from './event-loop-delay.js';
import type { ProcessMetrics } from './process-metrics.js';
import { familyHead, HistogramSeries, PROMETHEUS_TEXT_TYPE, sampleLine, type LabelPairs } from './prometheus-text.js';

/** Buckets of the operation durations: from a fast switchover (sub-second) to a long base backup. */
const DURATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 900, 3600];
const LOOP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

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

/** Every `action` of svc_callback_failures_total: the callbacks and the blocking scripts (a record, so one added to the ports must be added here); each is exposed at 0 from the start. */
const CALLBACK_ACTIONS = Object.keys({
  on_start: true,
  on_stop: true,
  on_restart: true,
  on_reload: true,
  on_role_change: true,
  pre_promote: true,
  before_stop: true,
  post_bootstrap: true,
} satisfies Record<CallbackAction | HookName, true>);

/**
 * Every `{operation, reason}` of svc_refused_operations_total, each exposed at 0 from the
 * start: the requests that can be refused (switchover, failover) by every code a refusal can
 * carry. Some pairs never occur (a failover is never refused for a missing leader): a
 * series that stays 0 costs less than a first refusal that rate() and increase() miss.
 */
const REFUSALS: readonly LabelPairs[] = MANUAL_ACTIONS.flatMap((operation) =>
  MANUAL_REQUEST_REFUSAL_CODES.map((reason) => [
    ['operation', operation],
    ['reason', reason],
  ] as const),
);

/** One metric family the agent exposes: its name and Prometheus type. */
export interface AgentMetricFamily {
  readonly name: string;
  readonly type: 'gauge' | 'counter' | 'histogram' | 'summary';
}

/**
 * Counts by a key of extra label values: the known ones (`known`) at 0 from the start, so
 * rate() and increase() see their first event; the others in the order they first appeared.
 */
class LabelledCounts {
  private readonly counts = new Map<string, { labels: LabelPairs; value: number }>();

  constructor(known: readonly LabelPairs[] = []) {
    for (const labels of known) this.counts.set(LabelledCounts.key(labels), { labels, value: 0 });
  }

  private static key(labels: LabelPairs): string {
    return labels.map(([, v]) => v).join('\u0000');
  }

  inc(labels: LabelPairs): void {
    const key = LabelledCounts.key(labels);
    const c = this.counts.get(key);
    if (c) c.value++;
    else this.counts.set(key, { labels, value: 1 });
  }

  lines(name: string, self: LabelPairs): string {
    let out = '';
    for (const c of this.counts.values()) out += sampleLine(name, [...self, ...c.labels], c.value);
    return out;
  }
}

/**
 * The agent's Prometheus metrics: the `svc_*` node metrics, read from the latest
 * snapshot at scrape time, and the agent's own loop, DCS-error, leader-change, duration,
 * refusal, callback and event-loop metrics, fed through AgentMetricsSink. Written as text
 * here rather than through prom-client: its registry and label bookkeeping cost more memory
 * and CPU per scrape than the few series of one agent need. One instance per agent, so
 * embedding two agents in one process (tests) keeps their series apart.
 */
export class AgentMetrics implements AgentMetricsSink {
  private readonly self: LabelPairs;
  private readonly loopDuration = new HistogramSeries(LOOP_BUCKETS);
  private readonly durations = new Map<MeasuredOperation, HistogramSeries>();
  private readonly dcsErrors = new LabelledCounts(DCS_OPERATIONS.map((op) => [['operation', op]] as const));
  private leaderChanges = 0;
  private readonly refused = new LabelledCounts(REFUSALS);
  private readonly callbackFailures = new LabelledCounts(CALLBACK_ACTIONS.map((a) => [['action', a]] as const));
  private readonly eventLoop: EventLoopDelaySource | null;
  private readonly process: ProcessMetrics | null;

  constructor(labels: Labels, opts: { readonly eventLoop?: EventLoopDelaySource | null; readonly process?: ProcessMetrics | null } = {}) {
    this.self = [
      ['scope', labels.scope],
      ['name', labels.name],
    ];
    for (const op of Object.keys(DURATION_HELP) as MeasuredOperation[]) this.durations.set(op, new HistogramSeries(DURATION_BUCKETS));
    this.eventLoop = opts.eventLoop ?? null;
    this.process = opts.process ?? null;
  }

  /** Content type of `render()`'s output. */
  get contentType(): string {
    return PROMETHEUS_TEXT_TYPE;
  }

  loopCompleted(seconds: number): void {
    if (Number.isFinite(seconds) && seconds >= 0) this.loopDuration.observe(seconds);
  }

  dcsError(operation: string): void {
    this.dcsErrors.inc([['operation', operation]]);
  }

  leaderChanged(_leader: string | null): void {
    this.leaderChanges++;
  }

  operationDuration(operation: MeasuredOperation, seconds: number): void {
    if (Number.isFinite(seconds) && seconds >= 0) this.durations.get(operation)?.observe(seconds);
  }

  operationRefused(operation: string, reason: string): void {
    this.refused.inc([
      ['operation', operation],
      ['reason', reason],
    ]);
  }

  callbackFailed(action: string): void {
    this.callbackFailures.inc([['action', action]]);
  }

  /** Every family `render()` writes, in order. */
  families(): AgentMetricFamily[] {
    return [
      ...SNAPSHOT_METRICS.map((d) => ({ name: d.name, type: d.type })),
      { name: 'svc_loop_duration_seconds', type: 'histogram' },
      { name: 'svc_dcs_errors_total', type: 'counter' },
      { name: 'svc_leader_changes_total', type: 'counter' },
      ...[...this.durations.keys()].map((op) => ({ name: `svc_${op}_duration_seconds`, type: 'histogram' as const })),
      { name: 'svc_refused_operations_total', type: 'counter' },
      { name: 'svc_callback_failures_total', type: 'counter' },
      ...(this.eventLoop
        ? [
            { name: 'svc_event_loop_delay_seconds', type: 'summary' as const },
            { name: 'svc_event_loop_delay_max_seconds', type: 'gauge' as const },
          ]
        : []),
      ...(this.process ? this.process.families().map((f) => ({ name: f.name, type: f.type as AgentMetricFamily['type'] })) : []),
    ];
  }

  /** Prometheus text of every metric, the node metrics taken from `snap`. */
  render(snap: NodeSnapshot): string {
    const node: LabelPairs = [
      ['scope', snap.node.scope],
      ['name', snap.node.name],
    ];
    const values = snapshotMetricValues(snap);
    let out = '';
    for (const def of SNAPSHOT_METRICS) {
      const help = def.name === 'svc_database_state' ? stateMetricHelp() : def.help;
      // Positions are absolute readings exposed as counters (they only grow).
      const v = values[def.name] ?? 0;
      out += familyHead(def.name, help, def.type) + sampleLine(def.name, node, def.type === 'counter' ? Math.max(0, v) : v);
    }
    const self = this.self;
    out += familyHead('svc_loop_duration_seconds', 'Duration of one HA loop run in seconds.', 'histogram') + this.loopDuration.lines('svc_loop_duration_seconds', self);
    out += familyHead('svc_dcs_errors_total', 'DCS calls of the agent that failed, by operation: the HA loop\'s by call, the REST API\'s and the shutdown\'s by what they attempted (a compare-and-set another member won is an answer, not a failure).', 'counter') + this.dcsErrors.lines('svc_dcs_errors_total', self);
    out +=
      familyHead('svc_leader_changes_total', 'Changes of the leader key seen by this agent (including the cluster becoming leaderless).', 'counter') +
      sampleLine('svc_leader_changes_total', self, this.leaderChanges);
    for (const [op, h] of this.durations) {
      const name = `svc_${op}_duration_seconds`;
      out += familyHead(name, DURATION_HELP[op], 'histogram') + h.lines(name, self);
    }
    out +=
      familyHead('svc_refused_operations_total', 'Operator requests (switchover, failover) this agent refused, by operation and reason code.', 'counter') +
      this.refused.lines('svc_refused_operations_total', self);
    out +=
      familyHead('svc_callback_failures_total', 'Callback commands (on_start, on_stop, on_restart, on_reload, on_role_change) and scripts (pre_promote, before_stop, post_bootstrap) that failed, timed out or could not start.', 'counter') +
      this.callbackFailures.lines('svc_callback_failures_total', self);
    if (this.eventLoop) out += this.eventLoopLines(this.eventLoop, self);
    // The process's own figures (memory, descriptors, CPU): what a leak or a runaway agent shows first.
    if (this.process) out += this.process.text('text');
    return out;
  }

  private eventLoopLines(source: EventLoopDelaySource, self: LabelPairs): string {
    const w = source.lastWindow();
    const t = source.totals();
    const win = `${source.windowSeconds} s`;
    let out = familyHead(
      'svc_event_loop_delay_seconds',
      `How late the agent's event loop ran a timer (perf_hooks.monitorEventLoopDelay), in seconds: quantiles over the last completed ${win} window; sum and count since start.`,
      'summary',
    );
    if (w) {
      out += sampleLine('svc_event_loop_delay_seconds', [...self, ['quantile', '0.5']], w.p50);
      out += sampleLine('svc_event_loop_delay_seconds', [...self, ['quantile', '0.99']], w.p99);
    }
    out += sampleLine('svc_event_loop_delay_seconds_sum', self, t.sum) + sampleLine('svc_event_loop_delay_seconds_count', self, t.count);
    out += familyHead('svc_event_loop_delay_max_seconds', `Longest event loop delay of the last completed ${win} window, in seconds.`, 'gauge');
    if (w) out += sampleLine('svc_event_loop_delay_max_seconds', self, w.max);
    return out;
  }
}
