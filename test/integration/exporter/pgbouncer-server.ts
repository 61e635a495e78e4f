/**
 * A real pgBouncer (Debian package pgbouncer) in a temp folder on a free loopback port, run as the
 * unprivileged OS user (it refuses root) in the foreground and stopped by PID. Trust auth: users
 * `postgres` (admin) and `stats` (stats_users) need no password.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, makeBaseDir, PG_OS_USER } from '../../support/postgres-server.js';

/** The pgbouncer binary (PGBOUNCER overrides). */
export const PGBOUNCER = process.env.PGBOUNCER ?? '/usr/sbin/pgbouncer';

/** A running pgBouncer. */
export interface PgBouncerServer {
  readonly port: number;
  /** URL of the admin console as the stats user. */
  readonly adminUrl: string;
  /** URL of database `app` through the pooler. */
  readonly appUrl: string;
  stop(): Promise<void>;
}

/** Starts pgBouncer in front of the PostgreSQL server on `pgPort` (database `app` -> `postgres`). */
export async function startPgBouncer(pgPort: number): Promise<PgBouncerServer> {
  if (!existsSync(PGBOUNCER)) throw new Error(`${PGBOUNCER} not found: run scripts/setup.sh (Debian package pgbouncer) or set PGBOUNCER`);
  const dir = await makeBaseDir();
  const port = await freePort();
  await writeFile(join(dir, 'users.txt'), '"postgres" ""\n"stats" ""\n');
  await writeFile(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `app = host=127.0.0.1 port=${pgPort} dbname=postgres`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'admin_users = postgres',
      'stats_users = stats',
      'pool_mode = transaction',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  const isRoot = process.getuid?.() === 0;
  const [cmd, args] = isRoot ? ['runuser', ['-u', PG_OS_USER, '--', PGBOUNCER, join(dir, 'pgbouncer.ini')]] : [PGBOUNCER, [join(dir, 'pgbouncer.ini')]];
  const child: ChildProcess = spawn(cmd, args, { stdio: 'ignore' });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const adminUrl = `postgres://stats@127.0.0.1:${port}/pgbouncer`;
  const deadline = Date.now() + 15_000;
  const net = await import('node:net');
  for (;;) {
    const up = await new Promise<boolean>((r) => {
      const s = net.connect(port, '127.0.0.1', () => (s.destroy(), r(true)));
      s.on('error', () => r(false));
    });
    if (up) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`pgbouncer did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    adminUrl,
    appUrl: `postgres://postgres@127.0.0.1:${port}/app`,
    stop: async () => {
      // runuser forwards SIGTERM to pgbouncer (a clean shutdown); the PID is our child's.
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
