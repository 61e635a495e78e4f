/**
 * PostgreSQL's own promotion on this machine, with no agent and no DCS: the floor under the
 * failover figure "key gone -> writable". For each WAL segment size: a bare primary and a
 * streaming standby (initdb --data-checksums, pg_basebackup, fsync on and the server defaults
 * the clusters run with), some WAL written, the primary killed with kill -9 as in
 * `bench:failover`; then on the standby `pg_promote(wait => false)` while a second session
 * tries an INSERT every millisecond. Prints the request -> first commit time, and PostgreSQL's
 * own marks from its log: promote received -> archive recovery complete (the new timeline's
 * first segment written whole) -> ready to accept connections.
 *
 *   node --import tsx bench/pg-promote.ts [--runs 5] [--wal-segsize 16,1]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { sleep } from '../scripts/lib/processes.js';
import { startPrimary, startReplica, type PgServer } from '../test/support/postgres-server.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { firstMatch, pgLog } from './lib/log-timeline.js';
import { printRuns, printTable, progress, type Row } from './lib/report.js';
import { max, median } from './lib/stats.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, 'wal-segsize': { type: 'string', default: '16,1' } } });
const runs = Number(values.runs);
const sizes = values['wal-segsize']!.split(',').map(Number);

/** One promotion, ms. */
interface Run {
  /** pg_promote() sent -> an INSERT committed. */
  readonly requestToCommit: number;
  /** 'received promote request' -> 'archive recovery complete' (PostgreSQL's log). */
  readonly receivedToRecovered: number;
  /** 'archive recovery complete' -> 'ready to accept connections'. */
  readonly recoveredToReady: number;
}

/** The server settings the benchmark clusters share with this pair (the test harness turns fsync off; a promotion's cost is mostly an fsync). */
const PARAMETERS = { fsync: true, synchronous_commit: 'on', shared_buffers: '128MB', max_connections: 100, log_line_prefix: '%m [%p] ', log_timezone: 'UTC' };

async function connect(server: PgServer): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: server.connString });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

async function promoteOnce(segsizeMb: number): Promise<Run> {
  const primary = await startPrimary({ parameters: PARAMETERS, initdbArgs: ['--data-checksums', `--wal-segsize=${segsizeMb}`] });
  let standby: PgServer | undefined;
  onCleanup(async () => {
    await standby?.destroy();
    await primary.destroy();
  });
  try {
    // A few MB of WAL, so the switch point lies inside a segment as in a running cluster.
    await primary.psql('CREATE TABLE t (id int); INSERT INTO t SELECT generate_series(1, 100000)');
    standby = await startReplica(primary);
    await primary.psql('INSERT INTO t SELECT generate_series(1, 50000); CHECKPOINT');
    await sleep(1000);
    primary.kill9();
    // The standby's WAL receiver notices the loss and retries, as during a leader key's ttl.
    await sleep(2000);
    const asker = await connect(standby);
    const writer = await connect(standby);
    try {
      const t0 = performance.now();
      const wall0 = Date.now();
      await asker.query('SELECT pg_promote(wait => false)');
      let t1 = Number.NaN;
      while (performance.now() - t0 < 60_000) {
        try {
          await writer.query('INSERT INTO t VALUES (0)');
          t1 = performance.now();
          break;
        } catch (e) {
          if ((e as { code?: string }).code !== '25006') throw e;
          await sleep(1);
        }
      }
      await sleep(200);
      const lines = pgLog(standby.logFile, wall0 - 1000, Date.now());
      const received = firstMatch(lines, /received promote request/);
      const recovered = firstMatch(lines, /archive recovery complete/, received);
      const ready = firstMatch(lines, /ready to accept connections/, recovered);
      const gap = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? Number.NaN : b - a);
      return { requestToCommit: t1 - t0, receivedToRecovered: gap(received, recovered), recoveredToReady: gap(recovered, ready) };
    } finally {
      await asker.end().catch(() => undefined);
      await writer.end().catch(() => undefined);
    }
  } finally {
    await standby?.destroy();
    await primary.destroy();
  }
}

await runBenchmark(async () => {
  const rows: Row[] = [];
  for (const mb of sizes) {
    const done: Run[] = [];
    for (let i = 0; i < runs; i++) {
      const run = await promoteOnce(mb);
      done.push(run);
      progress(`${mb} MB segments, run ${i + 1}/${runs}: commit ${run.requestToCommit.toFixed(0)} ms after pg_promote() (recovery complete after ${run.receivedToRecovered.toFixed(0)} ms, ready ${run.recoveredToReady.toFixed(0)} ms later)`);
    }
    printRuns(
      `PostgreSQL alone, ${mb} MB WAL segments (ms)`,
      ['run', 'pg_promote -> first commit', 'received -> recovery complete', 'recovery complete -> ready'],
      done.map((r, i) => [i + 1, r.requestToCommit.toFixed(1), r.receivedToRecovered.toFixed(0), r.recoveredToReady.toFixed(0)]),
    );
    const pick = (f: (r: Run) => number) => done.map(f).filter((x) => !Number.isNaN(x));
    rows.push(
      { figure: `[${mb} MB segments] pg_promote -> first commit, median`, value: median(pick((r) => r.requestToCommit)), unit: 'ms', note: `max ${max(pick((r) => r.requestToCommit)).toFixed(0)} ms; no agent: the floor under "key gone -> writable"` },
      { figure: `[${mb} MB segments]   received -> archive recovery complete, median`, value: median(pick((r) => r.receivedToRecovered)), unit: 'ms', note: "the new timeline's first segment, copied whole and fsynced" },
      { figure: `[${mb} MB segments]   recovery complete -> ready, median`, value: median(pick((r) => r.recoveredToReady)), unit: 'ms', note: 'end-of-recovery record, control file, the postmaster opens for writes' },
    );
  }
  printTable('PostgreSQL 15 promotion without an agent', rows);
});
