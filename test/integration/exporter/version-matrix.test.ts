import { expect } from 'chai';
import { loadCollectorFiles } from '../../../src/app/exporter/config-files.js';
import { versionInRange, type CollectorDefinition } from '../../../src/domain/collectors/collector.js';
import type { CollectorStat } from '../../../src/domain/collectors/stat.js';
import { parseExposition } from '../../unit/collectors/exposition-parser.js';
import { promtoolProblems } from './promtool.js';
import { SCHEMA_SQL, startTestExporterAt, statusOf, waitFor } from './fixture.js';
import { MATRIX_VERSIONS, startMatrixPrimary, startMatrixReplica, type MatrixServer } from './pg-versions.js';

type Exporter = Awaited<ReturnType<typeof startTestExporterAt>>;

async function stats(base: string): Promise<CollectorStat[]> {
  return ((await (await fetch(`${base}/stat?format=json`)).json()) as { collectors: CollectorStat[] }).collectors;
}

/** Statistics parameters the default collectors read; track_wal_io_timing exists from 14 on. */
function parameters(version: number): Record<string, string | boolean> {
  return { shared_preload_libraries: 'pg_stat_statements', track_io_timing: true, track_functions: 'all', ...(version >= 14 ? { track_wal_io_timing: true } : {}) };
}

// Every default collector runs once on a real server of each version it declares: on the
// primary, or on its streaming replica for the replica-only ones. A collector that fails on a
// declared version fails here.
for (const major of MATRIX_VERSIONS) {
  describe(`default collectors on PostgreSQL ${major} (primary and streaming replica)`, function () {
    this.timeout(120_000);
    let primary: MatrixServer | undefined;
    let replica: MatrixServer | undefined;
    const exporters: Exporter[] = [];
    let defaults: readonly CollectorDefinition[];

    before(async () => {
      defaults = (await loadCollectorFiles()).collectors;
      primary = await startMatrixPrimary(major, parameters(major));
      await primary.sql(SCHEMA_SQL);
      replica = await startMatrixReplica(primary, 'matrix_slot');
      for (const server of [primary, replica]) {
        const e = await startTestExporterAt(server.url);
        exporters.push(e);
        expect(await waitFor(async () => (await statusOf(e.url, '/readiness')) === 200, 20_000), `exporter on ${server.url} ready`).to.equal(true);
      }
    });

    after(async () => {
      for (const e of exporters) await e.stop();
      await replica?.destroy();
      await primary?.destroy();
    });

    it('every collector declared for this version runs without error on the primary or the replica', async () => {
      const [onPrimary, onReplica] = exporters as [Exporter, Exporter];
      const version = Number((await primary!.sql("SELECT current_setting('server_version_num')"))[0]![0]);
      expect(Math.floor(version / 10000)).to.equal(major);
      const bodies = await Promise.all([onPrimary, onReplica].map(async (e) => (await fetch(`${e.url}/metrics`)).text()));
      const recovery = bodies.map((b) => parseExposition(b).get('db_in_recovery')?.samples[0]?.value);
      expect(recovery, 'primary then replica').to.deep.equal([0, 1]);
      const all = [...(await stats(onPrimary.url)), ...(await stats(onReplica.url))];
      expect(all.filter((c) => c.errors > 0).map((c) => `${c.name}: ${c.lastError}`)).to.deep.equal([]);
      const ran = new Set(all.filter((c) => c.runs > 0).map((c) => c.name));
      const declared = defaults.filter((d) => versionInRange(d, version) && !d.skip).map((d) => d.key);
      expect(declared.filter((k) => !ran.has(k)), 'declared but never run').to.deep.equal([]);
      console.log(`      PostgreSQL ${version}: ${declared.length} collectors declared, all ran`);
    });

    it('promtool check metrics finds no problem in the default exposition of the primary and of the replica', async () => {
      for (const e of exporters) {
        const body = await (await fetch(`${e.url}/metrics`)).text();
        expect(await promtoolProblems(body), e.url).to.deep.equal([]);
      }
    });
  });
}
