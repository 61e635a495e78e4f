import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { sleep } from '../../scripts/lib/processes.js';
import { pgClient } from '../../test/e2e/e2e-cluster.js';

/** The table the probe writes to; created on the primary before probing. */
export const PROBE_TABLE = 'bench_probe';

/** SQL creating the probe table (run once on the primary). */
export const CREATE_PROBE_TABLE = `CREATE TABLE IF NOT EXISTS ${PROBE_TABLE} (node text, at timestamptz DEFAULT now())`;

/** Which node took a write first, and when (`performance.now()`). */
export interface FirstWrite {
  readonly node: string;
  readonly at: number;
}

/** Bounds a query: a client stuck on a stopping server must not stall the probe. */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e: unknown) => (clearTimeout(t), reject(e as Error)),
    );
  });
}

/**
 * Asks each of `nodes` every `everyMs` whether it is out of recovery, over one kept connection
 * per node (reconnecting after errors), and resolves with the first node that then commits an
 * INSERT. Kept connections mean a promotion is seen within `everyMs`, not after a connection
 * set-up; asking first keeps replicas' logs free of refused writes.
 */
export async function firstWritable(runner: ClusterRunner, nodes: readonly string[], timeoutMs: number, everyMs = 10): Promise<FirstWrite> {
  let winner: FirstWrite | undefined;
  const deadline = performance.now() + timeoutMs;
  const probe = async (node: string): Promise<void> => {
    let client: pg.Client | undefined;
    while (!winner && performance.now() < deadline) {
      try {
        if (!client) {
          client = pgClient(runner, node);
          client.on('error', () => undefined);
          await withTimeout(client.connect(), 2000);
        }
        const r = await withTimeout(client.query('SELECT pg_is_in_recovery() AS r'), 1000);
        if (r.rows[0].r === false) {
          await withTimeout(client.query(`INSERT INTO ${PROBE_TABLE}(node) VALUES ($1)`, [node]), 1000);
          winner ??= { node, at: performance.now() };
        } else {
          await sleep(everyMs);
        }
      } catch (e) {
        // A read-only refusal (SQLSTATE 25006: promotion not finished) keeps the session; anything else opens a new one.
        if ((e as { code?: string }).code !== '25006' && client) {
          void client.end().catch(() => undefined);
          client = undefined;
        }
        await sleep(everyMs);
      }
    }
    if (client) await client.end().catch(() => undefined);
  };
  await Promise.all(nodes.map(probe));
  if (!winner) throw new Error(`none of ${nodes.join(', ')} took a write within ${timeoutMs} ms`);
  return winner;
}
