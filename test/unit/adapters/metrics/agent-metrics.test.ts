import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { AgentMetrics } from '../../../../src/adapters/metrics/agent-metrics.js';
import { ProcessMetrics } from '../../../../src/adapters/metrics/process-metrics.js';
import { EventLoopDelayMonitor, type EventLoopDelaySource } from '../../../../src/adapters/metrics/event-loop-delay.js';
import { DCS_OPERATIONS } from '../../../../src/adapters/metrics/dcs-operations.js';
import { MANUAL_REQUEST_REFUSAL_CODES } from '../../../../src/domain/cluster/rules/manual-failover.js';
import { primaryFacts, snapshot } from '../http/support.js';

const PROMTOOL = '/usr/bin/promtool';

/** A source whose figures the test sets. */
class FixedEventLoop implements EventLoopDelaySource {
  readonly windowSeconds = 10;
  window: { p50: number; p99: number; max: number; samples: number } | null = null;
  lastWindow() {
    return this.window;
  }
  totals() {
    return { sum: 1.5, count: 300, max: 0.004 };
  }
}

/** The value of one sample line, by its exact name and label text. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('AgentMetrics: Prometheus text of the agent', () => {
  const self = '{scope="demo",name="node1"}';

  it('node metrics come from the snapshot, counters and histograms from the sink calls', () => {
    const m = new AgentMetrics({ scope: 'demo', name: 'node1' });
    m.loopCompleted(0.012);
    m.loopCompleted(0.3);
    m.dcsError('read');
    m.dcsError('read');
    m.dcsError('publish_member');
    m.leaderChanged('node2');
    m.operationDuration('switchover', 0.7);
    m.operationRefused('switchover', 'no_candidates');
    m.callbackFailed('on_start');
    const text = m.render(snapshot({ facts: primaryFacts(), leader: true, node: { scope: 'demo', name: 'node1' } }));
    expect(value(text, `svc_primary${self}`)).to.equal(1);
    expect(value(text, `svc_version${self}`)).to.equal(10200);
    expect(value(text, `svc_xlog_location${self}`)).to.be.above(0);
    expect(value(text, 'svc_loop_duration_seconds_bucket{le="0.025",scope="demo",name="node1"}')).to.equal(1);
    expect(value(text, 'svc_loop_duration_seconds_bucket{le="0.5",scope="demo",name="node1"}')).to.equal(2);
    expect(value(text, 'svc_loop_duration_seconds_bucket{le="+Inf",scope="demo",name="node1"}')).to.equal(2);
    expect(value(text, `svc_loop_duration_seconds_sum${self}`)).to.be.closeTo(0.312, 1e-9);
    expect(value(text, `svc_loop_duration_seconds_count${self}`)).to.equal(2);
    expect(value(text, 'svc_dcs_errors_total{scope="demo",name="node1",operation="read"}')).to.equal(2);
    expect(value(text, 'svc_dcs_errors_total{scope="demo",name="node1",operation="publish_member"}')).to.equal(1);
    expect(value(text, 'svc_dcs_errors_total{scope="demo",name="node1",operation="renew_leader"}')).to.equal(0);
    expect(value(text, `svc_leader_changes_total${self}`)).to.equal(1);
    expect(value(text, `svc_switchover_duration_seconds_count${self}`)).to.equal(1);
    expect(value(text, `svc_failover_duration_seconds_count${self}`)).to.equal(0);
    expect(value(text, 'svc_refused_operations_total{scope="demo",name="node1",operation="switchover",reason="no_candidates"}')).to.equal(1);
    expect(value(text, 'svc_callback_failures_total{scope="demo",name="node1",action="on_start"}')).to.equal(1);
  });

  it('the known label values of the labelled counters are there at 0 before their first event (rate() sees the first one)', () => {
    const m = new AgentMetrics({ scope: 'demo', name: 'node1' });
    const text = m.render(snapshot({ node: { scope: 'demo', name: 'node1' } }));
    const series = (name: string, label: string) =>
      [...text.matchAll(new RegExp(`^${name}\\{scope="demo",name="node1",${label}="([^"]+)"\\} (\\S+)$`, 'gm'))].map((x) => [x[1], Number(x[2])]);
    expect(series('svc_dcs_errors_total', 'operation')).to.deep.equal(DCS_OPERATIONS.map((op) => [op, 0]));
    expect(series('svc_callback_failures_total', 'action')).to.deep.equal(
      ['on_start', 'on_stop', 'on_restart', 'on_reload', 'on_role_change', 'pre_promote', 'before_stop', 'post_bootstrap'].map((a) => [a, 0]),
    );
    // Every request that can be refused, by every code of a refusal.
    const refusals = [...text.matchAll(/^svc_refused_operations_total\{scope="demo",name="node1",operation="([^"]+)",reason="([^"]+)"\} (\S+)$/gm)].map((x) => [x[1], x[2], Number(x[3])]);
    expect(refusals).to.deep.equal(['switchover', 'failover'].flatMap((op) => MANUAL_REQUEST_REFUSAL_CODES.map((reason) => [op, reason, 0])));
    m.dcsError('write_status');
    m.dcsError('write_status');
    m.callbackFailed('pre_promote');
    m.dcsError('something_new');
    m.operationRefused('failover', 'no_eligible_candidate');
    m.operationRefused('switchover', 'some_new_code');
    const after = m.render(snapshot({ node: { scope: 'demo', name: 'node1' } }));
    expect(value(after, 'svc_dcs_errors_total{scope="demo",name="node1",operation="write_status"}')).to.equal(2);
    expect(value(after, 'svc_dcs_errors_total{scope="demo",name="node1",operation="read"}')).to.equal(0);
    expect(value(after, 'svc_callback_failures_total{scope="demo",name="node1",action="pre_promote"}')).to.equal(1);
    expect(value(after, 'svc_refused_operations_total{scope="demo",name="node1",operation="failover",reason="no_eligible_candidate"}')).to.equal(1);
    expect(value(after, 'svc_refused_operations_total{scope="demo",name="node1",operation="switchover",reason="no_eligible_candidate"}')).to.equal(0);
    // A value outside the known set still counts.
    expect(value(after, 'svc_dcs_errors_total{scope="demo",name="node1",operation="something_new"}')).to.equal(1);
    expect(value(after, 'svc_refused_operations_total{scope="demo",name="node1",operation="switchover",reason="some_new_code"}')).to.equal(1);
  });

  it('every family it lists has one HELP and TYPE, and nothing else is written', () => {
    const m = new AgentMetrics({ scope: 'demo', name: 'node1' }, { eventLoop: new FixedEventLoop(), process: new ProcessMetrics([]) });
    const text = m.render(snapshot());
    // The process's own figures, as the exporter writes them: memory, descriptors, heap.
    for (const name of ['process_private_memory_bytes', 'process_open_fds', 'nodejs_heap_size_used_bytes', 'process_cpu_seconds_total']) expect(value(text, name)).to.be.greaterThan(0);
    const typed = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => ({ name: x[1], type: x[2] }));
    expect(typed).to.deep.equal(m.families());
    expect([...text.matchAll(/^# HELP (\S+) /gm)].map((x) => x[1])).to.deep.equal(m.families().map((f) => f.name));
  });

  it('event-loop delay: quantiles and max of the last window once there is one; sum and count since start', () => {
    const source = new FixedEventLoop();
    const m = new AgentMetrics({ scope: 'demo', name: 'node1' }, { eventLoop: source });
    let text = m.render(snapshot({ node: { scope: 'demo', name: 'node1' } }));
    expect(text).not.to.match(/quantile=/);
    expect(value(text, `svc_event_loop_delay_seconds_count${self}`)).to.equal(300);
    source.window = { p50: 0.0001, p99: 0.002, max: 0.0035, samples: 990 };
    text = m.render(snapshot({ node: { scope: 'demo', name: 'node1' } }));
    expect(value(text, 'svc_event_loop_delay_seconds{scope="demo",name="node1",quantile="0.5"}')).to.equal(0.0001);
    expect(value(text, 'svc_event_loop_delay_seconds{scope="demo",name="node1",quantile="0.99"}')).to.equal(0.002);
    expect(value(text, `svc_event_loop_delay_seconds_sum${self}`)).to.equal(1.5);
    expect(value(text, `svc_event_loop_delay_max_seconds${self}`)).to.equal(0.0035);
  });

  it('label values are escaped', () => {
    const m = new AgentMetrics({ scope: 'a"b', name: 'x\\y' });
    m.dcsError('re\nad');
    const text = m.render(snapshot({ node: { scope: 'a"b', name: 'x\\y' } }));
    expect(text).to.include('svc_dcs_errors_total{scope="a\\"b",name="x\\\\y",operation="read"} 0\n');
    expect(text).to.include('svc_dcs_errors_total{scope="a\\"b",name="x\\\\y",operation="re\\nad"} 1\n');
  });

  (existsSync(PROMTOOL) ? it : it.skip)('promtool check metrics finds no problem but the names of the spec\'s WAL position counters', () => {
    const source = new FixedEventLoop();
    source.window = { p50: 0.0001, p99: 0.002, max: 0.0035, samples: 990 };
    const m = new AgentMetrics({ scope: 'demo', name: 'node1' }, { eventLoop: source, process: new ProcessMetrics([]) });
    m.dcsError('read');
    m.operationRefused('failover', 'no_candidates');
    const r = spawnSync(PROMTOOL, ['check', 'metrics'], { input: m.render(snapshot({ facts: primaryFacts(), leader: true })), encoding: 'utf8' });
    // svc_xlog_*location keep the names Patroni gives them (counters without _total).
    const problems = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim() !== '' && !/^svc_xlog_(received_|replayed_)?location counter metrics should have "_total" suffix$/.test(l));
    expect(problems).to.deep.equal([]);
  });
});

describe('EventLoopDelayMonitor', () => {
  it('a window sees a block of the loop; the next window starts over', async () => {
    const monitor = new EventLoopDelayMonitor({ resolutionMs: 1, windowMs: 60_000 }).start();
    try {
      await new Promise((r) => setTimeout(r, 30));
      const until = performance.now() + 40;
      while (performance.now() < until) {
        // hold the loop
      }
      await new Promise((r) => setTimeout(r, 30));
      monitor.rotate();
      const w = monitor.lastWindow()!;
      expect(w.samples).to.be.above(0);
      expect(w.max).to.be.within(0.03, 1);
      // Delays beyond the 1 ms resolution: most runs of the timer were on time.
      expect(w.p50).to.be.below(0.005);
      expect(monitor.totals().count).to.equal(w.samples);
      monitor.rotate();
      expect(monitor.lastWindow()!.max).to.be.below(0.03);
      expect(monitor.totals().max).to.equal(w.max);
    } finally {
      monitor.stop();
    }
  });
});
