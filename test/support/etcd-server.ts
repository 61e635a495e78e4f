/**
 * Test harness: a real single-node etcd (Debian `etcd-server`) on free loopback ports with a
 * temp data dir, stopped by PID. It can stop and restart on the same ports and data to
 * simulate an outage.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { freePort as reservedPort } from './free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running (or stopped, restartable) test etcd. */
export interface EtcdServer {
  /** Client URL, `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** `127.0.0.1:<port>`, as the `etcd3.hosts` config takes it. */
  readonly host: string;
  /** PID of the current etcd process (0 while stopped). */
  readonly pid: number;
  readonly dataDir: string;
  /** SIGTERM by PID, SIGKILL if it has not exited after `graceMs`; keeps the data dir. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL by PID (simulated crash); waits until the process is gone. */
  kill(): Promise<void>;
  /** SIGSTOP by PID: the server keeps its connections open but answers nothing (a hung etcd). */
  freeze(): void;
  /** SIGCONT after freeze(). */
  thaw(): void;
  /** Starts again on the same ports and data dir (stopping first if running); waits until healthy. */
  restart(): Promise<void>;
  /** Stops the process and deletes the data dir. */
  cleanup(): Promise<void>;
}

/** Options of a test etcd. */
export interface StartEtcdOptions {
  /** etcd binary (default `ETCD_BIN` or `etcd` on PATH). */
  readonly bin?: string;
  /** How long to wait for `/health` (default 15 s). */
  readonly startTimeoutMs?: number;
  /** Extra command-line flags. */
  readonly extraArgs?: readonly string[];
  /** Serve clients over TLS with these PEM files (`endpoint` becomes https). */
  readonly tls?: EtcdTls;
}

/** Server-side TLS of a test etcd. */
export interface EtcdTls {
  readonly certFile: string;
  readonly keyFile: string;
  /** CA that signed the server cert; with `clientCertAuth`, also the CA client certs must chain to. */
  readonly caFile: string;
  /** Require client certificates (`--client-cert-auth`). */
  readonly clientCertAuth?: boolean;
  /** Client cert and key the harness uses for its health check when `clientCertAuth` is set. */
  readonly clientCertFile?: string;
  readonly clientKeyFile?: string;
}

const ETCD_BIN = process.env.ETCD_BIN ?? 'etcd';
const live = new Set<Harnessed>();

// A test runner that dies (or forgets an after() hook) must not leave etcd behind.
process.once('exit', () => {
  for (const s of live) s.killNow();
});

/** A free TCP port on 127.0.0.1 for etcd. */
export const freeLoopbackPort = reservedPort;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Harnessed implements EtcdServer {
  readonly endpoint: string;
  readonly host: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private output = '';

  constructor(
    readonly dataDir: string,
    private readonly clientPort: number,
    private readonly peerPort: number,
    private readonly bin: string,
    private readonly startTimeoutMs: number,
    private readonly extraArgs: readonly string[],
    private readonly tls: EtcdTls | undefined,
  ) {
    this.host = `127.0.0.1:${clientPort}`;
    this.endpoint = `${tls ? 'https' : 'http'}://${this.host}`;
  }

  get pid(): number {
    return this.child && this.child.exitCode === null && this.child.signalCode === null ? (this.child.pid ?? 0) : 0;
  }

  async start(): Promise<void> {
    const peer = `http://127.0.0.1:${this.peerPort}`;
    const args = [
      '--name', 'warden-test',
      '--data-dir', join(this.dataDir, 'etcd'),
      '--listen-client-urls', this.endpoint,
      '--advertise-client-urls', this.endpoint,
      '--listen-peer-urls', peer,
      '--initial-advertise-peer-urls', peer,
      '--initial-cluster', `warden-test=${peer}`,
      '--initial-cluster-state', 'new',
      '--logger', 'zap',
      '--log-outputs', 'stderr',
      '--log-level', 'warn',
      ...(this.tls
        ? [
            '--cert-file', this.tls.certFile,
            '--key-file', this.tls.keyFile,
            '--trusted-ca-file', this.tls.caFile,
            ...(this.tls.clientCertAuth ? ['--client-cert-auth'] : []),
          ]
        : []),
      ...this.extraArgs,
    ];
    this.output = '';
    const child = spawn(this.bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (e: NodeJS.ErrnoException) =>
        reject(
          new Error(
            e.code === 'ENOENT'
              ? `etcd binary '${this.bin}' not found: install it (apt-get install etcd-server) or set ETCD_BIN`
              : `could not start etcd '${this.bin}': ${e.message}`,
          ),
        ),
      );
    });
    const keep = (b: Buffer) => {
      this.output = (this.output + b.toString()).slice(-8000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
    this.child = child;
    await spawned;
    live.add(this);
    try {
      await this.waitHealthy();
    } catch (e) {
      await this.stop(1000);
      throw e;
    }
  }

  private async waitHealthy(): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      if (!this.pid) {
        throw new Error(`etcd exited during start-up (code ${this.child?.exitCode}, signal ${this.child?.signalCode}):\n${this.output}`);
      }
      try {
        const body = await this.health();
        if (body.health === 'true') return;
        last = JSON.stringify(body);
      } catch (e) {
        last = (e as Error).message;
      }
      await sleep(50);
    }
    throw new Error(`etcd on ${this.endpoint} not healthy after ${this.startTimeoutMs} ms (last: ${last}):\n${this.output}`);
  }

  /** GET /health, over TLS with the harness's files when the server uses TLS. */
  private async health(): Promise<{ health?: string }> {
    if (!this.tls) {
      const res = await fetch(`${this.endpoint}/health`, { signal: AbortSignal.timeout(1000) });
      return (await res.json()) as { health?: string };
    }
    const { caFile, clientCertFile, clientKeyFile } = this.tls;
    const [ca, cert, key] = await Promise.all([caFile, clientCertFile, clientKeyFile].map((f) => (f ? readFile(f) : undefined)));
    return new Promise((resolve, reject) => {
      // No SNI: the server name is an IP address (RFC 6066 forbids IPs there).
      const req = httpsRequest(`${this.endpoint}/health`, { ca, cert, key, servername: '', timeout: 1000 }, (res) => {
        let text = '';
        res.on('data', (b: Buffer) => (text += b.toString()));
        res.on('end', () => {
          try {
            resolve(JSON.parse(text) as { health?: string });
          } catch (e) {
            reject(e);
          }
        });
      });
      req.on('timeout', () => req.destroy(new Error('health check timed out')));
      req.on('error', reject);
      req.end();
    });
  }

  async stop(graceMs = 5000): Promise<void> {
    const pid = this.pid;
    if (pid) {
      // A frozen process would not act on SIGTERM.
      process.kill(pid, 'SIGCONT');
      process.kill(pid, 'SIGTERM');
      const killer = setTimeout(() => this.pid && process.kill(pid, 'SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(killer);
    }
    live.delete(this);
  }

  async kill(): Promise<void> {
    const pid = this.pid;
    if (pid) {
      process.kill(pid, 'SIGKILL');
      await this.exited;
    }
    live.delete(this);
  }

  freeze(): void {
    if (!this.pid) return;
    process.kill(this.pid, 'SIGSTOP');
    // SIGSTOP reaches each of etcd's threads a moment later: a request sent in that moment
    // would still be answered, so wait until every thread shows as stopped.
    const until = Date.now() + 2000;
    while (Date.now() < until && !allThreadsStopped(this.pid)) {
      /* spin: a stop takes microseconds */
    }
  }

  thaw(): void {
    if (this.pid) process.kill(this.pid, 'SIGCONT');
  }

  /** Synchronous SIGKILL for the exit hook. */
  killNow(): void {
    const pid = this.pid;
    if (pid) process.kill(pid, 'SIGKILL');
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async cleanup(): Promise<void> {
    await this.stop();
    await rm(this.dataDir, { recursive: true, force: true });
  }
}

/** Starts a fresh single-node etcd on free loopback ports and waits until it answers `/health`. */
export async function startEtcd(opts: StartEtcdOptions = {}): Promise<EtcdServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'warden-etcd-'));
  const clientPort = await freeLoopbackPort();
  let peerPort = await freeLoopbackPort();
  while (peerPort === clientPort) peerPort = await freeLoopbackPort();
  const server = new Harnessed(dataDir, clientPort, peerPort, opts.bin ?? ETCD_BIN, opts.startTimeoutMs ?? 15_000, opts.extraArgs ?? [], opts.tls);
  try {
    await server.start();
  } catch (e) {
    await server.cleanup();
    throw e;
  }
  return server;
}

/** True when every thread of `pid` is in the stopped state (`T` in /proc/<pid>/task/<tid>/stat). */
function allThreadsStopped(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).every((tid) => {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
    });
  } catch {
    return true;
  }
}

/**
 * Turns authentication on in a test etcd as the security guide does: a root user, and a user
 * `warden` (password `secret`) that may read and write `prefix` only. `tlsArgs` are etcdctl's
 * --cacert/--cert/--key when the server asks for client certificates.
 */
export async function enableEtcdAuth(server: EtcdServer, prefix: string, tlsArgs: readonly string[] = []): Promise<void> {
  const run = (...args: string[]) => etcdctl(server.endpoint, [...tlsArgs, ...args]);
  await run('user', 'add', 'root:rootpw');
  await run('user', 'add', 'warden:secret');
  await run('role', 'add', 'warden');
  await run('role', 'grant-permission', 'warden', '--prefix=true', 'readwrite', prefix);
  await run('user', 'grant-role', 'warden', 'warden');
  await run('auth', 'enable');
}

/** Runs etcdctl (API v3) against `endpoint` (host:port); `input` goes to its standard input. */
export function etcdctl(endpoint: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = execFile('etcdctl', ['--endpoints', endpoint, ...args], { env: { ...process.env, ETCDCTL_API: '3' }, maxBuffer: 8 << 20 }, (e, out, err) =>
      e ? reject(new Error(`${e.message}: ${err}`)) : resolve(out),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** Fills etcd with ~700 KB keys under `prefix` until its storage quota refuses a write (the NOSPACE alarm); true when it did. */
export async function fillEtcdToQuota(endpoint: string, prefix: string, maxKeys = 80): Promise<boolean> {
  const value = randomBytes(700 * 1024).toString('base64');
  for (let i = 0; i < maxKeys; i++) {
    const full = await etcdctl(endpoint, ['put', `${prefix}${i}`], value).then(() => false, (e: Error) => /database space exceeded/.test(e.message));
    if (full) return true;
  }
  return false;
}

/** What an operator does after the NOSPACE alarm: deletes what filled etcd (`prefix`), compacts, defragments, disarms. */
export async function freeEtcdSpace(endpoint: string, prefix: string): Promise<void> {
  await etcdctl(endpoint, ['del', '--prefix', prefix]);
  const status = JSON.parse(await etcdctl(endpoint, ['endpoint', 'status', '-w', 'json'])) as { Status: { header: { revision: number } } }[];
  await etcdctl(endpoint, ['compact', String(status[0]!.Status.header.revision)]);
  await etcdctl(endpoint, ['defrag']);
  await etcdctl(endpoint, ['alarm', 'disarm']);
}

/**
 * One etcd for the tests of the enclosing `describe`: started before them, stopped and its
 * data removed after. Call it in the `describe` body; the getter answers the server in a test.
 */
export function etcdForSuite(opts: StartEtcdOptions = {}): () => EtcdServer {
  let server: EtcdServer | undefined;
  before(async function () {
    this.timeout(30_000);
    server = await startEtcd(opts);
  });
  after(async function () {
    this.timeout(15_000);
    await server?.cleanup();
  });
  return () => {
    if (!server) throw new Error('the suite etcd is not started (etcdForSuite is called in a describe body, used in its tests)');
    return server;
  };
}
