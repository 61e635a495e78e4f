import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { sleep, spawnDetached, stopPid, waitFor } from '../../scripts/lib/processes.js';
import pg from 'pg';
import { freePorts } from './free-port.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** Wall-clock time in ms with sub-millisecond precision (comparable across processes' logs). */
function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Debian's haproxy. */
export const HAPROXY_BIN = '/usr/sbin/haproxy';

/** The handbook's HAProxy example (the first ```haproxy block of docs/load-balancing.md), as printed there. */
export function handbookExample(): string {
  const doc = readFileSync(join(repoRoot, 'docs/load-balancing.md'), 'utf8');
  const m = /```haproxy\n([\s\S]*?)```/.exec(doc);
  if (!m) throw new Error('docs/load-balancing.md has no ```haproxy example');
  return m[1]!;
}

/**
 * The handbook's example turned into a configuration for a local cluster, changing only what
 * the handbook says to change: the addresses (loopback, the cluster's ports in the order of
 * its `server` lines), no TLS on the checks (the demo's agents serve plain HTTP: "Without HTTPS
 * on the agents, drop `check-ssl verify required ca-file ...`"), and a stats socket to sample
 * the servers' states. Every timing setting stays as printed.
 */
export function benchConfig(example: string, o: { readonly runner: ClusterRunner; readonly primaryPort: number; readonly replicaPort: number; readonly statsSocket: string }): string {
  const nodes = o.runner.layout.nodes;
  let serverIndex = 0;
  const lines = example.split('\n').map((line) => {
    const bind = /^(\s*)bind \*:(5000|5001)\s*$/.exec(line);
    if (bind) return `${bind[1]}bind 127.0.0.1:${bind[2] === '5000' ? o.primaryPort : o.replicaPort}`;
    const server = /^(\s*)server (\S+) \S+:5432 check port 8008(.*)$/.exec(line);
    if (server) {
      const n = nodes[serverIndex++ % nodes.length]!;
      return `${server[1]}server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.apiPort}${server[3]}`;
    }
    return line.replace(/ check-ssl verify required ca-file \S+/, '');
  });
  const out = lines.join('\n');
  if (/\*:500[01]|:5432 |port 8008|check-ssl/.test(out) || serverIndex !== 2 * nodes.length) {
    throw new Error(`the handbook's HAProxy example no longer has the shape the benchmark adapts (bind *:5000/5001, server ... :5432 check port 8008):\n${example}`);
  }
  return out.replace(/^global\n/m, `global\n    stats socket ${o.statsSocket} mode 600 level admin\n`);
}

/** One server's line of `show stat`. */
export interface ServerState {
  readonly proxy: string;
  readonly server: string;
  /** `UP`, `UP 1/2` (going down), `DOWN`, `DOWN 1/2` (going up), `MAINT`, ... */
  readonly status: string;
}

/** A running haproxy in front of a cluster, started by PID, with its stats socket. */
export class HaproxyProcess {
  private constructor(
    readonly pid: number,
    readonly primaryPort: number,
    readonly replicaPort: number,
    readonly statsSocket: string,
    readonly configFile: string,
  ) {}

  /** Starts haproxy (foreground mode, `-db`) with the handbook's example adapted to `runner`'s cluster; its files go to the cluster's folder. */
  static async start(runner: ClusterRunner, example = handbookExample()): Promise<HaproxyProcess> {
    if (!existsSync(HAPROXY_BIN)) throw new Error(`${HAPROXY_BIN} is not installed (Debian package haproxy)`);
    const [primaryPort, replicaPort] = await freePorts(2);
    const dir = runner.layout.dir;
    const statsSocket = join(dir, 'haproxy.sock');
    const configFile = join(dir, 'haproxy.cfg');
    writeFileSync(configFile, benchConfig(example, { runner, primaryPort: primaryPort!, replicaPort: replicaPort!, statsSocket }));
    const pid = spawnDetached(HAPROXY_BIN, ['-f', configFile, '-db'], join(dir, 'logs', 'haproxy.log'));
    const h = new HaproxyProcess(pid, primaryPort!, replicaPort!, statsSocket, configFile);
    await waitFor('haproxy to answer on its stats socket', 10_000, async () => ((await h.servers()).length > 0 ? true : undefined), 100);
    return h;
  }

  /** `show stat` of every server (not the frontends and backends). */
  async servers(): Promise<ServerState[]> {
    const csv = await this.command('show stat');
    const [head, ...rows] = csv.split('\n');
    const cols = (head ?? '').replace(/^# /, '').split(',');
    const px = cols.indexOf('pxname');
    const sv = cols.indexOf('svname');
    const st = cols.indexOf('status');
    return rows
      .map((r) => r.split(','))
      .filter((f) => f.length > st && f[sv] !== 'FRONTEND' && f[sv] !== 'BACKEND')
      .map((f) => ({ proxy: f[px]!, server: f[sv]!, status: f[st]! }));
  }

  /** One command on the stats socket; resolves with the whole answer. */
  command(cmd: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const s = net.createConnection(this.statsSocket);
      let out = '';
      s.setEncoding('utf8');
      s.setTimeout(1000, () => s.destroy(new Error('stats socket timed out')));
      s.on('connect', () => s.end(`${cmd}\n`));
      s.on('data', (d: string) => (out += d));
      s.on('end', () => resolve(out));
      s.on('error', reject);
    });
  }

  /** Stops haproxy by PID. */
  async stop(): Promise<void> {
    await stopPid(this.pid, 5000);
  }
}

/** Inserts through the proxy every `everyMs` over one connection, reconnecting after any error, as an application would. */
export class ProxyClient {
  readonly successes: number[] = [];
  /** Ids whose INSERT was acknowledged. */
  readonly acknowledged: number[] = [];
  private running = false;
  private done: Promise<void> = Promise.resolve();
  private nextId = 1_000_000_000;

  /** `insert` is an INSERT taking the row's id as `$1`. */
  constructor(
    private readonly port: number,
    private readonly insert: string,
    private readonly everyMs = 20,
  ) {}

  start(): void {
    this.running = true;
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  /** The longest time between two successful writes within [from, to] (epoch ms). */
  longestGap(from: number, to: number): number {
    const s = this.successes.filter((t) => t >= from && t <= to);
    let longest = 0;
    for (let i = 1; i < s.length; i++) longest = Math.max(longest, s[i]! - s[i - 1]!);
    return longest;
  }

  private async loop(): Promise<void> {
    let client: pg.Client | undefined;
    while (this.running) {
      const started = wallNow();
      try {
        if (!client) {
          client = new pg.Client({ host: '127.0.0.1', port: this.port, user: 'postgres', password: 'warden-demo-su', database: 'postgres', connectionTimeoutMillis: 2000, query_timeout: 2000 });
          client.on('error', () => undefined);
          await client.connect();
        }
        const id = this.nextId++;
        await client.query(this.insert, [id]);
        this.successes.push(wallNow());
        this.acknowledged.push(id);
      } catch {
        if (client) void client.end().catch(() => undefined);
        client = undefined;
      }
      await sleep(Math.max(1, this.everyMs - (wallNow() - started)));
    }
    if (client) await client.end().catch(() => undefined);
  }
}


/** Samples which servers of the `primary` backend are UP, every `everyMs`. */
export class StatsSampler {
  readonly samples: { readonly at: number; readonly up: readonly string[] }[] = [];
  private running = false;
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly proxy: HaproxyProcess,
    private readonly everyMs = 10,
  ) {}

  start(): void {
    this.running = true;
    this.done = (async () => {
      while (this.running) {
        const started = wallNow();
        try {
          const servers = await this.proxy.servers();
          this.samples.push({ at: started, up: servers.filter((s) => s.proxy === 'primary' && s.status.startsWith('UP')).map((s) => s.server) });
        } catch {
          // haproxy busy: the next sample comes
        }
        await sleep(Math.max(1, this.everyMs - (wallNow() - started)));
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  /** Total time within [from, to] the primary backend had two or more servers UP (runs of such samples, each sample counting until the next). */
  twoUpMs(from: number, to: number): number {
    const s = this.samples.filter((x) => x.at >= from && x.at <= to);
    let total = 0;
    for (let i = 0; i < s.length - 1; i++) if (s[i]!.up.length >= 2) total += s[i + 1]!.at - s[i]!.at;
    return total;
  }

  /** First sample at or after `from` for which `pred` holds. */
  first(from: number, pred: (up: readonly string[]) => boolean): number | undefined {
    return this.samples.find((x) => x.at >= from && pred(x.up))?.at;
  }

  /** The servers UP in the latest sample. */
  get latest(): readonly string[] {
    return this.samples[this.samples.length - 1]?.up ?? [];
  }
}
