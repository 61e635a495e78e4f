import { expect } from 'chai';
import { ProcessMetrics } from '../../../src/adapters/metrics/process-metrics.js';
import { parseExporterOptions } from '../../../src/app/exporter/options.js';
import { StateProbe } from '../../../src/app/exporter/probe.js';
import { parseExposition } from './exposition-parser.js';
import { FakeSql, MemoryLogger } from './fakes.js';

describe('exporter: background probe', () => {
  const options = { ...parseExporterOptions([], {}, '0.1.0'), probeIntervalMs: 50 };
  const probeCalls = (sql: FakeSql) => sql.count(/^SELECT current_setting\('server_version_num'\)/);

  it('probes at once and then every interval, until stopped', async () => {
    const sql = new FakeSql();
    const probe = new StateProbe(sql, options, new MemoryLogger());
    expect(probe.state.status).to.equal('starting');
    probe.start();
    await new Promise((r) => setTimeout(r, 20));
    expect(probe.state.status).to.equal('primary');
    await new Promise((r) => setTimeout(r, 230));
    probe.stop();
    const n = probeCalls(sql);
    expect(n).to.be.within(3, 8);
    await new Promise((r) => setTimeout(r, 120));
    expect(probeCalls(sql)).to.equal(n);
  });

  it('reports role and version changes to listeners, not unchanged probes', async () => {
    const sql = new FakeSql();
    const probe = new StateProbe(sql, options, new MemoryLogger());
    const seen: string[] = [];
    probe.onChange((next, prev) => seen.push(`${prev.status}->${next.status}@${next.version}`));
    await probe.refresh();
    await probe.refresh();
    sql.inRecovery = true;
    await probe.refresh();
    sql.down = true;
    await probe.refresh();
    expect(probe.state).to.include({ status: 'down', version: 150004, error: 'connect ECONNREFUSED 127.0.0.1:5432' });
    sql.down = false;
    sql.inRecovery = false;
    sql.version = 160001;
    await probe.refresh();
    expect(seen).to.deep.equal(['starting->primary@150004', 'primary->replica@150004', 'replica->down@150004', 'down->primary@160001']);
  });

  it('shares one probe among concurrent refreshes; fresh() reuses a recent result', async () => {
    const sql = new FakeSql();
    sql.delayMs = 10;
    const probe = new StateProbe(sql, options, new MemoryLogger());
    await Promise.all([probe.refresh(), probe.refresh(), probe.refresh()]);
    expect(probeCalls(sql)).to.equal(1);
    await probe.fresh(10_000);
    expect(probeCalls(sql)).to.equal(1);
    await probe.fresh(0);
    expect(probeCalls(sql)).to.equal(2);
  });
});

describe('exporter: process metrics', () => {
  it('renders the process and Node.js metrics with the const labels, cached between renderings, in both formats', () => {
    const pm = new ProcessMetrics([['env', 'test']], 60_000);
    try {
      const text = pm.text('text');
      const f = parseExposition(text);
      expect(f.get('process_cpu_seconds_total')!.samples[0]!.labels).to.deep.equal({ env: 'test' });
      expect(f.get('process_resident_memory_bytes')!.samples[0]!.value).to.be.greaterThan(1_000_000);
      expect(f.get('nodejs_heap_size_used_bytes')!.samples[0]!.value).to.be.greaterThan(0);
      expect(pm.text('text')).to.equal(text);
      const om = pm.text('openmetrics');
      expect(om).to.contain('# TYPE process_cpu_seconds counter\n# UNIT process_cpu_seconds seconds\nprocess_cpu_seconds_total{env="test"} ');
    } finally {
      pm.close();
    }
  });
});
