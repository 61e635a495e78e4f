/**
 * Test harness: real PostgreSQL 15 servers (a primary, streaming replicas) in temp dirs on free
 * loopback ports, run as an unprivileged user when the tests run as root. Plain initdb/pg_ctl,
 * independent of PgDatabase, so any suite can use it.
 */
import { execFile, execFileSync } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, appendFile, chown, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { readFileSync, rmSync } from 'node:fs';
import { freePort as reservedPort } from './free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How to stop a server (pg_ctl modes, sent as signals to the postmaster). */
export type PgStopMode = 'smart' | 'fast' | 'immediate';

/** A running test server. */
export interface PgServer {
  /** Loopback TCP port (127.0.0.1). */
  readonly port: number;
  /** Temp directory holding dataDir, the socket and the server log. */
  readonly baseDir: string;
  readonly dataDir: string;
  /** Unix socket directory (also usable as a host in conn strings). */
  readonly socketDir: string;
  readonly logFile: string;
  /** Superuser conn string over TCP (trust auth on loopback). */
  readonly connString: string;
  /** Postmaster PID of the current run (0 once stopped). */
  readonly pid: number;
  /** Stops the postmaster by PID with `mode` (default fast) and waits until it is gone. */
  stop(mode?: PgStopMode): Promise<void>;
  /** SIGKILL to the postmaster (simulated crash); does not wait. */
  kill9(): void;
  /** Starts the server again on the same port and data dir (after stop/kill9). */
  start(): Promise<void>;
  /** pg_ctl promote and wait until out of recovery. */
  promote(): Promise<void>;
  /** Runs SQL through psql as the superuser; returns trimmed unaligned output. */
  psql(sql: string, database?: string): Promise<string>;
  /** Stops (immediate) if running and deletes the temp dir. */
  destroy(): Promise<void>;
}

/** Options of a primary. */
export interface StartPrimaryOptions {
  /** Extra postgresql.conf parameters (override the harness defaults). */
  readonly parameters?: Readonly<Record<string, string | number | boolean>>;
  /** Extra initdb arguments (e.g. ['--data-checksums']). */
  readonly initdbArgs?: readonly string[];
  /** Extra pg_hba.conf lines, inserted before the defaults. */
  readonly hba?: readonly string[];
}

/** Directory of the PostgreSQL binaries (PG_BIN_DIR overrides the Debian default). */
export const PG_BIN_DIR = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
/** OS user running the servers when the tests run as root. */
export const PG_OS_USER = process.env.PG_OS_USER ?? 'postgres';
const SUPERUSER = 'postgres';
const isRoot = process.getuid?.() === 0;

const live = new Set<Harnessed>();

/** Throws a clear error when the PostgreSQL 15 binaries are not installed. */
export async function assertPostgresBinaries(): Promise<void> {
  for (const bin of ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres', 'psql']) {
    try {
      await access(join(PG_BIN_DIR, bin), fsConstants.X_OK);
    } catch {
      throw new Error(
        `PostgreSQL 15 binary ${bin} not found in ${PG_BIN_DIR}: install postgresql-15 (apt-get install postgresql-15) or set PG_BIN_DIR`,
      );
    }
  }
}

/** A free TCP port on 127.0.0.1 (never 5432). */
export const freePort = reservedPort;

/** Runs a PostgreSQL binary as the server OS user (via runuser when root). */
export function runPg(bin: string, args: readonly string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<string> {
  const file = join(PG_BIN_DIR, bin);
  const [cmd, argv] = isRoot ? ['runuser', ['-u', PG_OS_USER, '--', file, ...args]] : [file, [...args]];
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      argv,
      { cwd: opts.cwd ?? tmpdir(), timeout: opts.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

let osIds: { uid: number; gid: number } | undefined;
function pgOsIds(): { uid: number; gid: number } {
  osIds ??= {
    uid: Number(execFileSync('id', ['-u', PG_OS_USER]).toString().trim()),
    gid: Number(execFileSync('id', ['-g', PG_OS_USER]).toString().trim()),
  };
  return osIds;
}

/** A temp dir owned by the server OS user (for suites that run their own servers in it). */
export async function makeBaseDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'warden-pg-'));
  if (isRoot) {
    const { uid, gid } = pgOsIds();
    await chown(dir, uid, gid);
  }
  return dir;
}

function confValue(v: string | number | boolean): string {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  return `'${v.replace(/'/g, "''")}'`;
}

function confLines(params: Readonly<Record<string, string | number | boolean>>): string {
  return (
    '\n# warden test harness\n' +
    Object.entries(params)
      .map(([k, v]) => `${k} = ${confValue(v)}`)
      .join('\n') +
    '\n'
  );
}

/** True while `pid` exists and is not a zombie. */
export function pidAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // a zombie still answers kill(0): look at the state field after the parenthesised comm
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.charAt(stat.lastIndexOf(')') + 2);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true;
  }
}

/** PIDs of processes working in `dir` (every PostgreSQL process chdirs to its data dir). */
async function processesIn(dir: string): Promise<number[]> {
  const found: number[] = [];
  for (const e of await readdir('/proc').catch(() => [] as string[])) {
    if (/^\d+$/.test(e) && (await readlink(`/proc/${e}/cwd`).catch(() => null)) === dir) found.push(Number(e));
  }
  return found;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Harnessed implements PgServer {
  pid = 0;
  private killed = 0;
  readonly dataDir: string;
  readonly logFile: string;
  readonly socketDir: string;
  readonly connString: string;

  constructor(
    readonly baseDir: string,
    readonly port: number,
  ) {
    this.dataDir = join(baseDir, 'data');
    this.logFile = join(baseDir, 'postgres.log');
    this.socketDir = baseDir;
    this.connString = `postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`;
  }

  async start(): Promise<void> {
    await this.clearCrashLeftovers();
    try {
      await runPg('pg_ctl', ['start', '-w', '-t', '60', '-D', this.dataDir, '-l', this.logFile], { cwd: this.baseDir, timeoutMs: 70_000 });
    } catch (e) {
      const log = await readFile(this.logFile, 'utf8').catch(() => '');
      throw new Error(`${(e as Error).message}\nserver log:\n${log.slice(-4000)}`);
    }
    const pidFile = await readFile(join(this.dataDir, 'postmaster.pid'), 'utf8');
    this.pid = Number(pidFile.split('\n')[0]);
    live.add(this);
  }

  /**
   * After kill9(): waits for the orphaned children to exit and removes postmaster.pid and the
   * socket lock, whose PID may still be an unreaped zombie that PostgreSQL takes for alive.
   */
  private async clearCrashLeftovers(): Promise<void> {
    const text = await readFile(join(this.dataDir, 'postmaster.pid'), 'utf8').catch(() => null);
    const pid = text === null ? 0 : Number(text.split('\n')[0]);
    const deadline = Date.now() + 10_000;
    // SIGKILL is delivered asynchronously: give a postmaster we just killed time to die
    while (pid && pid === this.killed && pidAlive(pid) && Date.now() < deadline) await sleep(20);
    if (!pid || pidAlive(pid)) return;
    while ((await processesIn(this.dataDir)).length && Date.now() < deadline) await sleep(50);
    await rm(join(this.dataDir, 'postmaster.pid'), { force: true });
    await rm(join(this.socketDir, `.s.PGSQL.${this.port}.lock`), { force: true });
  }

  async stop(mode: PgStopMode = 'fast'): Promise<void> {
    const pid = this.pid;
    if (!pidAlive(pid)) {
      this.pid = 0;
      return;
    }
    const signal = mode === 'smart' ? 'SIGTERM' : mode === 'fast' ? 'SIGINT' : 'SIGQUIT';
    process.kill(pid, signal);
    const deadline = Date.now() + 60_000;
    while (pidAlive(pid)) {
      if (Date.now() > deadline) {
        process.kill(pid, 'SIGKILL');
        break;
      }
      await sleep(50);
    }
    this.pid = 0;
  }

  kill9(): void {
    if (!pidAlive(this.pid)) return;
    this.killed = this.pid;
    process.kill(this.pid, 'SIGKILL');
  }

  async promote(): Promise<void> {
    await runPg('pg_ctl', ['promote', '-w', '-t', '60', '-D', this.dataDir], { cwd: this.baseDir, timeoutMs: 70_000 });
    const deadline = Date.now() + 30_000;
    while ((await this.psql('SELECT pg_is_in_recovery()')) !== 'f') {
      if (Date.now() > deadline) throw new Error(`server on port ${this.port} still in recovery after promote`);
      await sleep(50);
    }
  }

  psql(sql: string, database = 'postgres'): Promise<string> {
    return runPg(
      'psql',
      ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(this.port), '-U', SUPERUSER, '-d', database, '-c', sql],
      { cwd: this.baseDir, timeoutMs: 30_000 },
    ).then((s) => s.trim());
  }

  async destroy(): Promise<void> {
    await this.stop('immediate');
    await rm(this.baseDir, { recursive: true, force: true });
    live.delete(this);
  }
}

const HARNESS_DEFAULTS = (port: number, socketDir: string): Record<string, string | number | boolean> => ({
  port,
  listen_addresses: '127.0.0.1',
  unix_socket_directories: socketDir,
  wal_level: 'replica',
  hot_standby: true,
  max_wal_senders: 10,
  max_replication_slots: 10,
  wal_log_hints: true,
  // the machine is shared: keep servers small and fast; nothing here must survive an OS crash
  shared_buffers: '16MB',
  max_connections: 30,
  fsync: false,
  synchronous_commit: 'off',
  full_page_writes: true,
  logging_collector: false,
});

/** initdb (trust auth, superuser `postgres`) and start a primary on a free port. */
export async function startPrimary(opts: StartPrimaryOptions = {}): Promise<PgServer> {
  await assertPostgresBinaries();
  const baseDir = await makeBaseDir();
  const port = await freePort();
  const srv = new Harnessed(baseDir, port);
  try {
    await runPg(
      'initdb',
      ['-D', srv.dataDir, '-U', SUPERUSER, '--auth=trust', '--no-sync', '--no-instructions', '-E', 'UTF8', '--locale=C', ...(opts.initdbArgs ?? [])],
      { cwd: baseDir },
    );
    await appendFile(join(srv.dataDir, 'postgresql.conf'), confLines({ ...HARNESS_DEFAULTS(port, baseDir), ...opts.parameters }));
    if (opts.hba?.length) {
      const hbaPath = join(srv.dataDir, 'pg_hba.conf');
      const hba = await readFile(hbaPath, 'utf8');
      await writeFile(hbaPath, `${opts.hba.join('\n')}\n${hba}`);
    }
    await srv.start();
    return srv;
  } catch (e) {
    await srv.destroy().catch(() => undefined);
    throw e;
  }
}

/** pg_basebackup -R -X stream from `primary` and start a streaming replica on a free port. */
export async function startReplica(primary: PgServer, opts: { parameters?: Readonly<Record<string, string | number | boolean>> } = {}): Promise<PgServer> {
  await assertPostgresBinaries();
  const baseDir = await makeBaseDir();
  const port = await freePort();
  const srv = new Harnessed(baseDir, port);
  try {
    await runPg(
      'pg_basebackup',
      ['-h', '127.0.0.1', '-p', String(primary.port), '-U', SUPERUSER, '-D', srv.dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
      { cwd: baseDir, timeoutMs: 120_000 },
    );
    // later entries win: override the primary's port and socket dir copied with the backup
    await appendFile(
      join(srv.dataDir, 'postgresql.conf'),
      confLines({ port, unix_socket_directories: baseDir, ...opts.parameters }),
    );
    await srv.start();
    return srv;
  } catch (e) {
    await srv.destroy().catch(() => undefined);
    throw e;
  }
}

/**
 * Stops whatever postmaster runs in `dataDir`, by the PID in its postmaster.pid (SIGQUIT:
 * immediate), and waits until it is gone. For after() hooks of suites that start servers
 * through other means (e.g. PgDatabase).
 */
export async function stopPostmasterOf(dataDir: string): Promise<void> {
  const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => null);
  const pid = text === null ? 0 : Number(text.split('\n')[0]);
  if (!pidAlive(pid)) return;
  process.kill(pid, 'SIGQUIT');
  const deadline = Date.now() + 30_000;
  while (pidAlive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await sleep(20);
  }
}

/** Destroys every server this process started (for after() hooks). */
export async function destroyAllServers(): Promise<void> {
  await Promise.all([...live].map((s) => s.destroy().catch(() => undefined)));
}

// Last resort when a suite forgets its after() hook or the process is interrupted.
process.once('exit', () => {
  for (const s of live) {
    if (pidAlive(s.pid)) process.kill(s.pid, 'SIGQUIT');
    try {
      rmSync(s.baseDir, { recursive: true, force: true });
    } catch {
      /* best effort at exit */
    }
  }
});
