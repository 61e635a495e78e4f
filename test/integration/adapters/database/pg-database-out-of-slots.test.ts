/**
 * Every connection slot taken, the superusers' reserved ones included (real PostgreSQL 15):
 * the agent's probe cannot log in. It reports a server that runs without answering, as for a
 * hung one, and says once, at warn, that this is a want of connection slots and what to do;
 * once a slot is free again the probe answers and says so.
 */
import { expect } from 'chai';
import type pg from 'pg';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { connect, destroyNodes, makeNode } from './pg-test-nodes.js';

/** A connection taken as soon as a slot is free (within 5 s). */
async function connectOnceSlotFree(n: Parameters<typeof connect>[0]): Promise<pg.Client> {
  const until = Date.now() + 5000;
  for (;;) {
    try {
      return await connect(n);
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe('PgDatabase: no connection slot left for the agent (real PostgreSQL 15)', function () {
  this.timeout(60_000);
  after(destroyNodes);

  it('probes as a server that does not answer, says why once, and answers again once a slot is free', async () => {
    const logger = new MemoryLogger();
    const n = await makeNode(
      'slots',
      { superuser: { username: 'postgres', password: 'pw' }, replication: { username: 'replicator', password: 'rpw' } },
      { logger },
    );
    await n.db.initdb();
    await n.db.start({ upstream: null, timeoutMs: 30_000 });
    expect(await n.db.probe()).to.include({ running: true });
    const held: pg.Client[] = [];
    try {
      // Every slot the server has left, as superuser (an application that logs in as postgres).
      for (;;) {
        const c = await connect(n).catch(() => null);
        if (c === null) break;
        held.push(c);
      }
      // The agent's own session ends; its slot goes to another client before the agent's next probe.
      await held[0]!.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'warden'");
      // The terminated backend frees its slot a moment after pg_terminate_backend returns.
      held.push(await connectOnceSlotFree(n));
      const facts = await n.db.probe();
      expect(facts.running, 'no answer').to.equal(false);
      const again = await n.db.probe();
      expect(again.running).to.equal(false);
      const warned = logger.lines.filter((l) => l.level === 'warn' && l.msg.includes('every connection slot is taken'));
      expect(warned, 'said once').to.have.length(1);
      expect(String(warned[0]!.fields['error'])).to.match(/too many clients|reserved/);
      await held.pop()!.end();
      expect(await n.db.probe()).to.include({ running: true });
      expect(logger.find("the server takes the agent's connection again")).to.have.length(1);
    } finally {
      for (const c of held) await c.end().catch(() => undefined);
    }
  });
});
