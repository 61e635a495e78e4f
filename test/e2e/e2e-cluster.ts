import { mkdtempSync, chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Context, Runnable } from 'mocha';
import pg from 'pg';
import { nodeConfigPath, type ClusterLayout } from '../../scripts/lib/cluster-layout.js';
import { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { sleep, waitFor } from '../../scripts/lib/processes.js';
import { freePorts } from '../support/free-port.js';

/** Short timings so failovers take seconds, within spec minimums (ttl >= 20). */
export const E2E_DCS = { ttl: 20, loop_wait: 1, retry_timeout: 5, maximum_lag_on_failover: 1048576, db: { use_pg_rewind: true, use_slots: true, parameters: {} } };

/** A 3-node cluster on free loopback ports in a temp folder; `tags` by node name (node1..node3), `dcs` over the short timings. */
export async function e2eRunner(
  opts: {
    readonly tags?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
    readonly scope?: string;
    readonly dcs?: Readonly<Record<string, unknown>>;
    /** `db.pre_promote` / `db.before_stop` of every node (`{name}`: the node's name; `{hooks}`: the folder of callbacks.log). */
    readonly hooks?: Readonly<Partial<Record<'pre_promote' | 'before_stop', string>>>;
    /** `bootstrap.post_bootstrap` of every node (`{name}` and `{hooks}` as in `hooks`). */
    readonly postBootstrap?: string;
  } = {},
): Promise<ClusterRunner> {
  const ports = await freePorts(8);
  const dir = mkdtempSync(join(tmpdir(), 'warden-e2e-'));
  chmodSync(dir, 0o755);
  // Every role change and start is appended to callbacks.log: `<node> <action> <role> <scope>`
  // (in a folder of its own: preparing the cluster empties the cluster's folder).
  const hooks = mkdtempSync(join(tmpdir(), 'warden-e2e-hooks-'));
  chmodSync(hooks, 0o755);
  const script = join(hooks, 'callback.sh');
  writeFileSync(script, `#!/bin/sh\necho "$@" >> ${join(hooks, 'callbacks.log')}\n`);
  chmodSync(script, 0o755);
  const layout: ClusterLayout = {
    dir,
    scope: opts.scope ?? 'e2e',
    namespace: '/service',
    etcdClientPort: ports[0]!,
    etcdPeerPort: ports[1]!,
    nodes: [0, 1, 2].map((i) => {
      const name = `node${i + 1}`;
      const tags = opts.tags?.[name];
      return { name, apiPort: ports[2 + i]!, pgPort: ports[5 + i]!, ...(tags ? { tags } : {}) };
    }),
    dcs: { ...E2E_DCS, ...opts.dcs },
    binDir: '/usr/lib/postgresql/15/bin',
    callbacks: { on_role_change: `${script} {name}`, on_start: `${script} {name}` },
    ...(opts.hooks ? { hooks: Object.fromEntries(Object.entries(opts.hooks).map(([k, v]) => [k, v.replaceAll('{hooks}', hooks)])) } : {}),
    ...(opts.postBootstrap ? { postBootstrap: opts.postBootstrap.replaceAll('{hooks}', hooks) } : {}),
  };
  return new ClusterRunner(layout);
}

/** Starts the cluster from nothing (etcd, then every agent) and waits until it is healthy; resolves with the primary. */
export async function bringUp(runner: ClusterRunner): Promise<string> {
  runner.prepare(true);
  await runner.startEtcd();
  for (const n of runner.layout.nodes) runner.startAgent(n.name);
  return runner.waitHealthy(180_000);
}

/** The folders an e2e cluster of `layout` lives in: its own, and the callbacks' folder beside it when e2eRunner made one. */
export function e2eFolders(layout: ClusterLayout): string[] {
  const script = layout.callbacks?.['on_start']?.split(' ')[0];
  const hooks = script ? dirname(script) : undefined;
  return [layout.dir, ...(hooks && basename(hooks).startsWith('warden-e2e-hooks-') ? [hooks] : [])];
}

/** Whether a test of the suite whose after-hook runs with `ctx` failed. */
export function suiteFailed(ctx: Context): boolean {
  const suite = ctx.test?.parent;
  if (!suite) return false;
  // A failed "before all" hook (the cluster never came up) counts: mocha marks the hook, not the tests.
  const hooks = [...((suite as unknown as { _beforeAll?: Runnable[] })._beforeAll ?? []), ...((suite as unknown as { _beforeEach?: Runnable[] })._beforeEach ?? [])];
  return [...suite.tests, ...hooks].some((t) => t.state === 'failed');
}

/**
 * Stops an e2e cluster by PID and removes its folders (each holds three data directories,
 * 0.3-0.9 GB). They stay, logs and all, when `keep` (e.g. a test of the suite failed) or
 * WARDEN_KEEP_E2E=1; the path is printed then.
 */
export async function disposeE2eCluster(runner: ClusterRunner, keep = false): Promise<void> {
  await runner.down();
  const folders = e2eFolders(runner.layout);
  if (keep) printLogTails(runner.layout);
  if (keep || process.env['WARDEN_KEEP_E2E'] === '1') {
    console.error(`kept ${folders.join(' and ')} (logs under ${join(runner.layout.dir, 'logs')})`);
    return;
  }
  for (const f of folders) rmSync(f, { recursive: true, force: true });
}

/** The last lines of each agent's log, for a failed suite: CI keeps the test output, not the machine's folders. */
function printLogTails(layout: ClusterLayout, lines = 25): void {
  for (const n of layout.nodes) {
    const file = join(layout.dir, 'logs', `${n.name}.log`);
    if (!existsSync(file)) continue;
    const tail = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines);
    console.error(`--- last ${tail.length} lines of ${n.name}'s log ---\n${tail.join('\n')}`);
  }
}

/** JSON request to one agent. */
export async function api(runner: ClusterRunner, node: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${runner.apiUrl(node)}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(90_000),
  });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* plain text */
  }
  return { status: r.status, body: parsed };
}

/**
 * Waits until `via`'s /cluster shows `candidate` within maximum_lag_on_failover of the leader:
 * just after a start the candidate's published position can be a segment behind, and a
 * switchover to it refused for that.
 */
export async function candidateCaughtUp(runner: ClusterRunner, via: string, candidate: string): Promise<void> {
  const bound = Number(runner.layout.dcs['maximum_lag_on_failover'] ?? E2E_DCS.maximum_lag_on_failover);
  await waitFor(`${candidate} within maximum_lag_on_failover`, 60_000, async () => {
    const members = (await api(runner, via, 'GET', '/cluster')).body?.members as { name: string; lag?: unknown }[] | undefined;
    const lag = members?.find((m) => m.name === candidate)?.lag;
    return typeof lag === 'number' && lag <= bound ? true : undefined;
  });
}

/** The file the e2e cluster's callbacks append to. */
export function callbacksLog(runner: ClusterRunner): string {
  const cmd = runner.layout.callbacks?.['on_role_change'] ?? '';
  return join(dirname(cmd.split(' ')[0]!), 'callbacks.log');
}

/** One member's `GET /events` stream, collected while it runs. */
export class EventFollower {
  readonly events: any[] = [];
  private readonly ac = new AbortController();
  private readonly done: Promise<void>;

  constructor(runner: ClusterRunner, node: string) {
    this.done = (async () => {
      try {
        const res = await fetch(`${runner.apiUrl(node)}/events`, { headers: { accept: 'text/event-stream' }, signal: this.ac.signal });
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        let text = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          text += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = text.indexOf('\n\n')) >= 0) {
            const data = /^data: (.*)$/m.exec(text.slice(0, end))?.[1];
            text = text.slice(end + 2);
            if (data) this.events.push(JSON.parse(data));
          }
        }
      } catch {
        // aborted, or the agent went away
      }
    })();
  }

  async stop(): Promise<void> {
    this.ac.abort();
    await this.done;
  }
}

/** Runs wardenctl against the cluster; returns stdout (throws with stderr on a non-zero exit). */
export function wardenctl(runner: ClusterRunner, ...args: string[]): string {
  const r = spawnSync(process.execPath, ['bin/wardenctl.js', '-c', nodeConfigPath(runner.layout, 'node1'), ...args], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`wardenctl ${args.join(' ')} exited ${r.status}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** A superuser connection to a node's PostgreSQL. */
export function pgClient(runner: ClusterRunner, node: string): pg.Client {
  return new pg.Client({ host: '127.0.0.1', port: runner.node(node).pgPort, user: 'postgres', password: 'warden-demo-su', database: 'postgres', connectionTimeoutMillis: 2000, statement_timeout: 10_000 });
}

/** Runs one statement on a node; throws when it fails. */
export async function sql(runner: ClusterRunner, node: string, text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const c = pgClient(runner, node);
  // A server that dies under the statement also makes the client emit 'error': the statement's rejection says it already.
  c.on('error', () => undefined);
  await c.connect();
  try {
    return await c.query(text, params);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/**
 * Inserts a row every `everyMs` into whichever node accepts writes, remembering every id whose
 * COMMIT was acknowledged and the timestamps of the last write before and first write after a gap.
 */
export class Writer {
  /** Each writer numbers its rows from its own base: the table keeps the rows of earlier writers. */
  private static nextBase = 1;
  readonly acknowledged: number[] = [];
  private running = false;
  private loop: Promise<void> | undefined;
  private next = Writer.claimBase();
  /** Longest interval between two acknowledged writes, ms. */
  maxGapMs = 0;
  /**
   * Longest interval from an acknowledged write to the start of the statement that got the
   * next one acknowledged, ms: the time the writes were refused or the servers unreachable,
   * without a commit that merely took long on a busy machine (that one counts in `maxGapMs` only).
   */
  maxStoppedMs = 0;
  private lastAckAt = 0;

  constructor(private readonly runner: ClusterRunner, private readonly everyMs = 10) {}

  private static claimBase(): number {
    const base = Writer.nextBase;
    Writer.nextBase += 100_000_000;
    return base;
  }

  start(): void {
    this.running = true;
    this.lastAckAt = Date.now();
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    const clients = new Map<string, pg.Client>();
    while (this.running) {
      for (const n of this.runner.layout.nodes) {
        if (!this.running) break;
        let c = clients.get(n.name);
        try {
          if (!c) {
            c = pgClient(this.runner, n.name);
            c.on('error', () => undefined);
            await c.connect();
            clients.set(n.name, c);
          }
          const id = this.next;
          const sentAt = Date.now();
          await c.query('INSERT INTO e2e_writes(id) VALUES ($1)', [id]);
          this.next++;
          this.acknowledged.push(id);
          const now = Date.now();
          this.maxGapMs = Math.max(this.maxGapMs, now - this.lastAckAt);
          this.maxStoppedMs = Math.max(this.maxStoppedMs, sentAt - this.lastAckAt);
          this.lastAckAt = now;
          await sleep(this.everyMs);
          break;
        } catch {
          if (c) {
            clients.delete(n.name);
            await c.end().catch(() => undefined);
          }
        }
      }
      await sleep(5);
    }
    await Promise.all([...clients.values()].map((c) => c.end().catch(() => undefined)));
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/** Starts etcd, then `first` alone (its data becomes the primary's), then the other members; resolves once every replica streams. */
export async function startClusterLedBy(runner: ClusterRunner, first: string): Promise<void> {
  await runner.startEtcd();
  runner.startAgent(first);
  await runner.waitHealthy(120_000, [first]);
  for (const n of runner.layout.nodes) if (n.name !== first) runner.startAgent(n.name);
  await runner.waitHealthy(180_000);
}
