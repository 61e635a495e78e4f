import type pg from 'pg';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { sleep } from '../../scripts/lib/processes.js';
import { pgClient } from '../../test/e2e/e2e-cluster.js';

/** The table the writer inserts into; created on the primary before writing. */
export const WRITES_TABLE = 'bench_writes';

/** SQL creating the writer's table (run once on the primary). */
export const CREATE_WRITES_TABLE = `CREATE TABLE IF NOT EXISTS ${WRITES_TABLE} (id bigint PRIMARY KEY, node text, at timestamptz DEFAULT now())`;

/** One acknowledged commit: which node took it and when (epoch ms, sub-ms precision). */
export interface Commit {
  readonly id: number;
  readonly node: string;
  readonly at: number;
}

/** Epoch ms with sub-millisecond precision, on the same clock as the agents' and PostgreSQL's log stamps. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Bounds a query: a client stuck on a stopping server must not stall the writer. */
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
 * Writes to every node at once, each over one kept connection, every `everyMs`: a node seen in
 * recovery is first asked `pg_is_in_recovery()` (its log stays free of refused INSERTs), a
 * writable one gets an INSERT. Every acknowledged commit is kept with its node and time, so
 * the write gap of a switchover is exactly "last commit on the old primary to first commit on
 * the new one", to within `everyMs`, with no connection set-up on the new primary's side.
 */
export class SwitchWriter {
  readonly commits: Commit[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private static nextId = 1;

  constructor(
    private readonly runner: ClusterRunner,
    private readonly everyMs = 10,
  ) {}

  start(): void {
    this.running = true;
    this.loops = this.runner.layout.nodes.map((n) => this.loop(n.name));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** The last commit on `node` at or before `before` (epoch ms). */
  lastOn(node: string, before = Number.POSITIVE_INFINITY): Commit | undefined {
    for (let i = this.commits.length - 1; i >= 0; i--) {
      const c = this.commits[i]!;
      if (c.node === node && c.at <= before) return c;
    }
    return undefined;
  }

  /** The first commit on `node` at or after `after` (epoch ms). */
  firstOn(node: string, after: number): Commit | undefined {
    return this.commits.find((c) => c.node === node && c.at >= after);
  }

  /** Ids of every acknowledged commit. */
  get acknowledged(): number[] {
    return this.commits.map((c) => c.id);
  }

  private async loop(node: string): Promise<void> {
    let client: pg.Client | undefined;
    let replica = true;
    while (this.running) {
      const started = wallNow();
      try {
        if (!client) {
          client = pgClient(this.runner, node);
          client.on('error', () => undefined);
          await withTimeout(client.connect(), 2000);
          replica = true;
        }
        if (replica) replica = (await withTimeout(client.query('SELECT pg_is_in_recovery() AS r'), 1000)).rows[0].r === true;
        if (!replica) {
          const id = SwitchWriter.nextId++;
          await withTimeout(client.query(`INSERT INTO ${WRITES_TABLE}(id, node) VALUES ($1, $2)`, [id, node]), 1000);
          this.commits.push({ id, node, at: wallNow() });
        }
      } catch (e) {
        // A read-only refusal keeps the session; anything else (a stopping server) opens a new one.
        if ((e as { code?: string }).code === '25006') replica = true;
        else if (client) {
          void client.end().catch(() => undefined);
          client = undefined;
        }
      }
      await sleep(Math.max(1, this.everyMs - (wallNow() - started)));
    }
    if (client) await client.end().catch(() => undefined);
  }
}
