// The alert rules and the Grafana dashboard shipped in docs/monitoring: they parse, and every
// metric they name is one the agent or the exporter really exposes (from their registries and
// the bundled collector definitions, not from a list kept by hand).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { AgentMetrics } from '../../../src/adapters/metrics/agent-metrics.js';
import { EventLoopDelayMonitor } from '../../../src/adapters/metrics/event-loop-delay.js';
import { ProcessMetrics } from '../../../src/adapters/metrics/process-metrics.js';
import { loadCollectorFiles } from '../../../src/app/exporter/config-files.js';
import { familyName } from '../../../src/domain/collectors/collector.js';
import { renderBuildInfo, renderScrapeSelfStats, renderServerGauges } from '../../../src/domain/collectors/self-metrics.js';

const docs = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/monitoring');
const RULES = join(docs, 'warden-alerts.yml');
const DASHBOARD = join(docs, 'warden-dashboard.json');

/** Series names a metric family of a type adds (histograms expose _bucket, _sum, _count). */
function seriesOf(name: string, type: string): string[] {
  return type === 'histogram' ? [name, `${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
}

/** Series names a summary adds besides its quantiles. */
function summarySeries(name: string): string[] {
  return [name, `${name}_sum`, `${name}_count`];
}

/** Every metric name the agent exposes: its families. */
async function agentMetrics(): Promise<Set<string>> {
  const m = new AgentMetrics({ scope: 'demo', name: 'node1' }, { eventLoop: new EventLoopDelayMonitor() });
  return new Set(m.families().flatMap((f) => (f.type === 'summary' ? summarySeries(f.name) : seriesOf(f.name, f.type))));
}

/** Every metric name the exporter exposes: the bundled collectors, its own metrics (namespace db), the process metrics. */
export async function exporterMetrics(): Promise<Set<string>> {
  const out = new Set<string>();
  for (const def of (await loadCollectorFiles()).collectors) {
    for (const col of def.metrics) if (col.usage === 'GAUGE' || col.usage === 'COUNTER' || col.usage === 'HISTOGRAM') seriesOf(familyName(def, col), col.usage.toLowerCase()).forEach((n) => out.add(n));
  }
  const self =
    renderBuildInfo('db', [], { version: '1', branch: 'b', revision: 'r' }) +
    renderServerGauges('db', [], { up: true, version: 150000, inRecovery: false }) +
    renderScrapeSelfStats('db', [], { lastScrapeDurationSeconds: 0, scrapesTotal: 0, scrapeRequestsTotal: 0, scrapeErrorsTotal: 0, lastScrapeTimestampSeconds: 0, collectors: [{ name: 'c', lastDurationSeconds: 0, errors: 0, cacheHits: 0, lastMetrics: 0 }] });
  for (const m of self.matchAll(/^# TYPE (\S+) (\S+)$/gm)) seriesOf(m[1]!, m[2]!).forEach((n) => out.add(n));
  for (const m of new ProcessMetrics([]).text().matchAll(/^# TYPE (\S+) (\S+)$/gm)) seriesOf(m[1]!, m[2]!).forEach((n) => out.add(n));
  return out;
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan', 'le']);

/**
 * The metric names a PromQL expression reads: identifiers left once strings, label matchers,
 * grouping clauses, range and offset durations and function calls are taken out.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\boffset\s+\d+[smhdwy]/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = stripped.slice(m.index! + m[0].length).trimStart();
    if (after.startsWith('(') || KEYWORDS.has(m[0].toLowerCase())) continue;
    if (/^\d/.test(m[0]) || /^[0-9.e+-]+$/i.test(m[0])) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** Every PromQL expression of the dashboard: panel targets and template variable queries. */
function dashboardExpressions(dashboard: { panels?: unknown[]; templating?: { list?: unknown[] } }): string[] {
  const out: string[] = [];
  const visit = (p: Record<string, unknown>) => {
    for (const t of (p['targets'] as { expr?: string }[] | undefined) ?? []) if (t.expr) out.push(t.expr);
    for (const c of (p['panels'] as Record<string, unknown>[] | undefined) ?? []) visit(c);
  };
  for (const p of (dashboard.panels ?? []) as Record<string, unknown>[]) visit(p);
  for (const v of (dashboard.templating?.list ?? []) as { type?: string; query?: unknown }[]) {
    if (v.type !== 'query') continue;
    const q = typeof v.query === 'string' ? v.query : (v.query as { query?: string }).query ?? '';
    // label_values(metric, label): the metric is the first argument.
    const m = /label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)/.exec(q);
    if (m) out.push(m[1]!);
  }
  return out;
}

describe('monitoring: alert rules and Grafana dashboard', function () {
  this.timeout(20_000);
  let known: Set<string>;

  before(async () => {
    known = new Set([...(await agentMetrics()), ...(await exporterMetrics())]);
  });

  it('extracts metric names from PromQL', () => {
    expect(metricNames('max by (scope) (svc_xlog_location{scope="a"}) - on (scope) group_right svc_xlog_replayed_location > 67108864')).to.deep.equal(['svc_xlog_location', 'svc_xlog_replayed_location']);
    expect(metricNames('histogram_quantile(0.99, sum by (le, name) (rate(svc_loop_duration_seconds_bucket[5m])))')).to.deep.equal(['svc_loop_duration_seconds_bucket']);
    expect(metricNames('count by (scope) (svc_version) < count by (scope) (svc_version offset 15m)')).to.deep.equal(['svc_version']);
    expect(metricNames('time() - svc_dcs_last_seen > 60 and db_up == 0')).to.deep.equal(['svc_dcs_last_seen', 'db_up']);
  });

  it('promtool accepts the rules', () => {
    const r = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(r.error, 'promtool is missing: run bash scripts/setup.sh (Debian package prometheus)').to.equal(undefined);
    expect(r.status, r.stdout + r.stderr).to.equal(0);
    expect(r.stdout).to.match(/SUCCESS: \d+ rules found/);
  });

  it('every rule names only metrics the agent or the exporter exposes, and carries a severity and a summary', () => {
    const doc = YAML.parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { alert: string; expr: string; labels?: { severity?: string }; annotations?: { summary?: string } }[] }[] };
    const rules = doc.groups.flatMap((g) => g.rules);
    expect(rules.length).to.be.greaterThan(10);
    const unknown = rules.flatMap((r) => metricNames(r.expr).filter((n) => !known.has(n)).map((n) => `${r.alert}: ${n}`));
    expect(unknown).to.deep.equal([]);
    for (const r of rules) {
      expect(r.labels?.severity, r.alert).to.be.oneOf(['critical', 'warning', 'info']);
      expect(r.annotations?.summary, r.alert).to.be.a('string');
    }
    // Both programs are covered.
    const named = new Set(rules.flatMap((r) => metricNames(r.expr)));
    expect([...named].some((n) => n.startsWith('svc_'))).to.equal(true);
    expect([...named].some((n) => n.startsWith('db_'))).to.equal(true);
  });

  it("promtool: an agent's memory alert fires after an hour over 256 MiB, named after the agent, and never for the exporter", () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-rules-'));
    try {
      const agent = (instance: string, name: string, bytes: number) => [
        { series: `process_private_memory_bytes{job="warden",instance="${instance}"}`, values: `${bytes}x90` },
        { series: `svc_version{job="warden",instance="${instance}",scope="demo",name="${name}"}`, values: '10000x90' },
      ];
      const tests = {
        rule_files: [RULES],
        evaluation_interval: '1m',
        tests: [
          {
            interval: '1m',
            input_series: [
              ...agent('pg1:8008', 'pg1', 300e6),
              ...agent('pg2:8008', 'pg2', 30e6),
              // The exporter's process metrics carry the same name, without an agent beside them.
              { series: 'process_private_memory_bytes{job="warden-exporter",instance="pg1:9630"}', values: '300000000x90' },
            ],
            alert_rule_test: [
              { eval_time: '59m', alertname: 'WardenAgentMemoryHigh', exp_alerts: [] },
              {
                eval_time: '61m',
                alertname: 'WardenAgentMemoryHigh',
                exp_alerts: [
                  {
                    exp_labels: { severity: 'warning', job: 'warden', instance: 'pg1:8008', scope: 'demo', name: 'pg1' },
                    exp_annotations: {
                      summary: 'Agent pg1 (demo) holds 286.1MiB of private memory',
                      description: "An agent holds 20-40 MiB; one that keeps growing has a leak. See the runbook 'An agent's memory grows'.",
                    },
                  },
                ],
              },
            ],
          },
        ],
      };
      const file = join(dir, 'memory-alert.test.yml');
      writeFileSync(file, YAML.stringify(tests));
      const r = spawnSync('promtool', ['test', 'rules', file], { encoding: 'utf8' });
      expect(r.status, r.stdout + r.stderr).to.equal(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the dashboard is valid JSON whose every query names only exposed metrics', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { title: string; uid: string; panels: { id: number; gridPos: unknown }[]; templating: { list: unknown[] } };
    expect(dashboard.uid).to.equal('warden-overview');
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).to.equal(ids.length);
    const exprs = dashboardExpressions(dashboard);
    expect(exprs.length).to.be.greaterThan(20);
    const unknown = exprs.flatMap((e) => metricNames(e).filter((n) => !known.has(n)).map((n) => `${n} in ${e}`));
    expect(unknown).to.deep.equal([]);
  });
});
