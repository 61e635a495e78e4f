/**
 * The control file read without pg_controldata, on real servers of every supported major
 * version (13-18): the fields the agent uses must sit where the reader looks in each of them.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readControlFile } from '../../../../src/adapters/database/pg-control-file.js';
import { parseLsn } from '../../../../src/domain/cluster/model/lsn.js';
import { MATRIX_VERSIONS, startMatrixPrimary, type MatrixServer } from '../../exporter/pg-versions.js';
import { pidAlive } from '../../../support/postgres-server.js';

async function stopFast(srv: MatrixServer): Promise<void> {
  const pid = Number((await readFile(join(srv.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 30_000;
  while (pidAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

describe('readControlFile on PostgreSQL 13-18', function () {
  this.timeout(180_000);
  for (const major of MATRIX_VERSIONS) {
    it(`PostgreSQL ${major}: the system identifier, the state, the last checkpoint and its timeline, the hot-standby settings, running and after a clean shutdown`, async () => {
      // Settings away from their defaults, so each is found at its own place.
      const srv = await startMatrixPrimary(major, { max_connections: 37, max_worker_processes: 9, max_wal_senders: 7, max_prepared_transactions: 3, max_locks_per_transaction: 71 });
      try {
        await srv.sql('CHECKPOINT');
        const [[lsn, tli]] = (await srv.sql('SELECT checkpoint_lsn::text, timeline_id::text FROM pg_control_checkpoint()')) as [[string, string]];
        const [[sysid]] = (await srv.sql('SELECT system_identifier::text FROM pg_control_system()')) as [[string]];
        const running = await readControlFile(srv.dataDir);
        const settings = Object.fromEntries(
          ((await srv.sql(`SELECT name, setting FROM pg_settings WHERE name IN ('max_connections', 'max_worker_processes', 'max_wal_senders', 'max_prepared_transactions', 'max_locks_per_transaction')`)) as [string, string][]).map(([n, v]) => [n, Number(v)]),
        );
        expect(settings).to.deep.equal({ max_connections: 37, max_worker_processes: 9, max_wal_senders: 7, max_prepared_transactions: 3, max_locks_per_transaction: 71 });
        expect(running).to.deep.equal({ systemIdentifier: sysid, version: running?.version, state: 6, checkpointLsn: parseLsn(lsn), timeline: Number(tli), standbyMinimums: settings });
        expect(running!.version).to.equal(major >= 18 ? 1800 : major >= 17 ? 1700 : 1300);
        await stopFast(srv);
        const down = await readControlFile(srv.dataDir);
        // 1: "shut down", the shutdown checkpoint written after the one above.
        expect(down).to.deep.include({ systemIdentifier: sysid, state: 1, timeline: Number(tli) });
        expect(down!.checkpointLsn).to.be.greaterThan(parseLsn(lsn)!);
      } finally {
        await srv.destroy();
      }
    });
  }
});
