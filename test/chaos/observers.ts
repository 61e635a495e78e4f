/**
 * What the chaos suite watches while it breaks things: a writer per node (a row every 20 ms,
 * each acknowledged COMMIT kept with its time), the read-only health checks of every node,
 * and the leader key in etcd.
 */
import pg from 'pg';
import { Etcd3KeyValue } from '../../src/adapters/cluster-store/etcd3-key-value.js';
import { clusterPrefix, ClusterKey } from '../../src/adapters/cluster-store/keys.js';
import type { Ack, HealthAnswer, PrimaryTimeline } from './checks.js';

/** Where a node's PostgreSQL and API are. */
export interface NodeAddress {
  readonly name: string;
  readonly host: string;
  readonly pgPort: number;
  readonly apiUrl: string;
}

/** Superuser password of the lab's clusters. */
export const SUPERUSER_PASSWORD = 'warden-demo-su';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How long a writer's statement may wait before it is given up (and counted as refused). */
export const WRITER_QUERY_TIMEOUT_MS = 3000;

/** A superuser connection to a node, failing fast (an unreachable node must not stall a writer). */
export function connect(node: NodeAddress): pg.Client {
  const c = new pg.Client({
    host: node.host,
    port: node.pgPort,
    user: 'postgres',
    password: SUPERUSER_PASSWORD,
    database: 'postgres',
    connectionTimeoutMillis: 1000,
    // A COMMIT that waits (a synchronous standby cut off) is given up: it was never acknowledged.
    query_timeout: WRITER_QUERY_TIMEOUT_MS,
  });
  c.on('error', () => undefined);
  return c;
}

/** Inserts a row into `chaos_writes` every `everyMs` on one node, whichever role it has, keeping every acknowledged id. */
export class NodeWriter {
  readonly acks: Ack[] = [];
  /** Why a write failed, newest last: what a long write gap shows the client (a read-only refusal, a replica's every write, is flagged). */
  readonly failures: { readonly node: string; readonly at: number; readonly message: string; readonly readOnly: boolean }[] = [];
  private running = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly node: NodeAddress,
    private next: number,
    private readonly everyMs = 20,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    let client: pg.Client | null = null;
    while (this.running) {
      const started = Date.now();
      try {
        if (!client) {
          client = connect(this.node);
          await client.connect();
        }
        const id = this.next++;
        await client.query('INSERT INTO chaos_writes(id, node) VALUES ($1, $2)', [id, this.node.name]);
        this.acks.push({ node: this.node.name, id, at: Date.now() });
      } catch (e) {
        // A read-only replica refuses at once and keeps its session; anything else gets a new one.
        const readOnly = /read-only transaction/.test((e as Error).message);
        this.failures.push({ node: this.node.name, at: Date.now(), message: (e as Error).message, readOnly });
        if (this.failures.length > 500) this.failures.shift();
        if (!readOnly) {
          await client?.end().catch(() => undefined);
          client = null;
        }
      }
      await sleep(Math.max(0, this.everyMs - (Date.now() - started)));
    }
    await client?.end().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/** Polls `/replica` of every node every `everyMs`, keeping each answer and the timelines primaries showed. */
export class HealthWatch {
  readonly answers: HealthAnswer[] = [];
  readonly primaryTimelines: PrimaryTimeline[] = [];
  private running = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly nodes: readonly NodeAddress[],
    private readonly everyMs = 200,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  private async ask(node: NodeAddress): Promise<void> {
    const sentAt = Date.now();
    try {
      const r = await fetch(`${node.apiUrl}/replica`, { signal: AbortSignal.timeout(1000) });
      const doc = (await r.json()) as { role?: string; timeline?: number; replication_state?: string };
      const at = Date.now();
      if (doc.role === 'primary' && typeof doc.timeline === 'number' && !this.primaryTimelines.some((p) => p.timeline >= doc.timeline!)) {
        this.primaryTimelines.push({ at, timeline: doc.timeline, node: node.name });
      }
      this.answers.push({ node: node.name, sentAt, at, status: r.status, timeline: doc.timeline ?? null, replicationState: doc.replication_state ?? null });
    } catch {
      // No answer is no 200.
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      const started = Date.now();
      await Promise.all(this.nodes.map((n) => this.ask(n)));
      await sleep(Math.max(0, this.everyMs - (Date.now() - started)));
    }
  }

  /** The first moment `node` answered /replica 200 while streaming on a timeline at least `timeline`, after `since`. */
  streamingSince(node: string, timeline: number, since: number): number | null {
    const a = this.answers.find((x) => x.node === node && x.at >= since && x.status === 200 && x.replicationState === 'streaming' && (x.timeline ?? 0) >= timeline);
    return a ? a.at : null;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/** Polls the leader key every `everyMs`, keeping each change with its time (the value, or null when the key is gone). */
export class LeaderKeyWatch {
  readonly changes: { at: number; leader: string | null }[] = [];
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly kv: Etcd3KeyValue;

  constructor(etcdHosts: readonly string[], scope: string, private readonly everyMs = 100) {
    this.kv = new Etcd3KeyValue({ hosts: [...etcdHosts], prefix: clusterPrefix('/service', scope), retryTimeoutMs: 3000 });
  }

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    let last: string | null | undefined;
    while (this.running) {
      try {
        const leader = (await this.kv.readAll()).get(ClusterKey.leader)?.value ?? null;
        if (leader !== last) this.changes.push({ at: Date.now(), leader });
        last = leader;
      } catch {
        // etcd down: nothing seen
      }
      await sleep(this.everyMs);
    }
  }

  /** When the key stopped naming `old` after `since` (gone or taken by another), or null. */
  movedFrom(old: string, since: number): number | null {
    return this.changes.find((c) => c.at >= since && c.leader !== old)?.at ?? null;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.kv.close();
  }
}
