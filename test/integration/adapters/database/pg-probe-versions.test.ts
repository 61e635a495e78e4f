/**
 * The agent's one-round-trip probe on a real primary and streaming replica of each PostgreSQL
 * version it supports (13-18): every catalog view and function it reads must exist there, with
 * the columns it reads, and answer what the HA loop relies on.
 */
import { expect } from 'chai';
import { NullLogger } from '../../../../src/adapters/logger/null-logger.js';
import { observe } from '../../../../src/adapters/database/pg-probe.js';
import { PgSession } from '../../../../src/adapters/database/pg-session.js';
import { MATRIX_VERSIONS, startMatrixPrimary, startMatrixReplica, type MatrixServer } from '../../exporter/pg-versions.js';

function sessionOn(server: MatrixServer): PgSession {
  return new PgSession(() => ({ host: '127.0.0.1', port: server.port, user: 'postgres' }), { connectTimeoutMs: 5000, statementTimeoutMs: 5000 }, new NullLogger());
}

describe('the agent probe on PostgreSQL 13-18 (primary and streaming replica)', function () {
  this.timeout(120_000);
  for (const major of MATRIX_VERSIONS) {
    it(`PostgreSQL ${major}`, async () => {
      const primary = await startMatrixPrimary(major);
      let replica: MatrixServer | undefined;
      const sessions: PgSession[] = [];
      try {
        replica = await startMatrixReplica(primary, 'probe_slot');
        await primary.sql('CREATE TABLE t AS SELECT 1 AS a');
        const [onPrimary, onReplica] = [sessionOn(primary), sessionOn(replica)];
        sessions.push(onPrimary, onReplica);
        const p = await observe(onPrimary);
        expect(p.inRecovery).to.equal(false);
        expect(Math.floor(p.serverVersion / 10000)).to.equal(major);
        expect(p.timeline).to.equal(1);
        expect(p.walLocation).to.be.a('number');
        expect(p.slots.map((s) => s.name)).to.deep.equal(['probe_slot']);
        // The replica's row shows once it streams.
        let r = await observe(onReplica);
        for (let i = 0; i < 100 && (r.replicationState !== 'streaming' || (await observe(onPrimary)).replication.length === 0); i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          r = await observe(onReplica);
        }
        expect(r.inRecovery).to.equal(true);
        expect(r.replicationState).to.equal('streaming');
        expect(r.timeline).to.equal(1);
        expect(r.receivedLocation).to.be.a('number');
        expect(r.replayedLocation).to.be.a('number');
        expect(r.upstreamSlotName).to.equal('probe_slot');
        expect((await observe(onPrimary)).replication.map((row) => row.application_name)).to.deep.equal(['replica']);
      } finally {
        for (const s of sessions) s.close();
        await replica?.destroy();
        await primary.destroy();
      }
    });
  }
});
