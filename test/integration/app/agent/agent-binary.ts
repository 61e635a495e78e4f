/**
 * Test support: the real `warden` binary as a child process, with a node configuration on
 * a real etcd and a PostgreSQL data directory in a temp dir, its output kept line by line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EtcdServer } from '../../../support/etcd-server.js';
import { freePort, makeBaseDir, stopPostmasterOf } from '../../../support/postgres-server.js';

/** The agent's launcher, as users run it. */
export const WARDEN_BIN = fileURLToPath(new URL('../../../../bin/warden.js', import.meta.url));

/** A node configuration written to a temp dir. */
export interface NodeFiles {
  readonly baseDir: string;
  readonly dataDir: string;
  readonly configPath: string;
  readonly apiUrl: string;
}

/** A started agent process. */
export interface AgentProcess extends NodeFiles {
  readonly child: ChildProcess;
  /** stdout lines, and stderr chunks prefixed `stderr: `. */
  readonly lines: string[];
  readonly exited: Promise<number | null>;
}

/** Polls `fn` every 250 ms until it is true; throws after `timeoutMs`. */
export async function until(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** PID in the data directory's postmaster.pid, 0 when none. */
export function postmasterPid(dataDir: string): number {
  const file = join(dataDir, 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : 0;
}

/** Writes a one-node configuration (ttl 20, loop_wait 2 unless `dcs` says otherwise); `db` lines are added to the db section. */
export async function writeNodeConfig(etcd: EtcdServer, scope: string, opts: { readonly dcs?: string; readonly db?: string; readonly initdb?: string } = {}): Promise<NodeFiles> {
  const baseDir = await makeBaseDir();
  const dataDir = join(baseDir, 'data');
  const [pgPort, apiPort] = [await freePort(), await freePort()];
  const configPath = join(baseDir, 'node.yml');
  await writeFile(
    configPath,
    `scope: ${scope}
name: node1
restapi: {listen: 127.0.0.1:${apiPort}}
etcd3: {hosts: [${etcd.host}]}
bootstrap:
  dcs: ${opts.dcs ?? '{ttl: 20, loop_wait: 2, retry_timeout: 5}'}
  initdb: ${opts.initdb ?? '[{encoding: UTF8}, {locale: C}, no-sync]'}
db:
  listen: 127.0.0.1:${pgPort}
  data_dir: ${dataDir}
  authentication: {superuser: {username: postgres}, replication: {username: replicator}}
  parameters: {unix_socket_directories: ${baseDir}, shared_buffers: 16MB, max_connections: 30, fsync: false}
${opts.db ?? ''}
watchdog: {mode: off}
fencer: {socket: ${join(baseDir, 'fencer.sock')}}
`,
  );
  return { baseDir, dataDir, configPath, apiUrl: `http://127.0.0.1:${apiPort}` };
}

/** Starts the binary on `files` (its standard output kept in `lines`, or on the descriptor `stdout`); `cleanups` gets what stops it (SIGKILL, postmaster, temp dir). */
export function spawnAgent(files: NodeFiles, cleanups: (() => Promise<void>)[], stdout?: number): AgentProcess {
  const child = spawn(process.execPath, [WARDEN_BIN, '-c', files.configPath], { stdio: ['ignore', stdout ?? 'pipe', 'pipe'], env: { ...process.env, WARDEN_LOG_LEVEL: 'info' } });
  const lines: string[] = [];
  let buf = '';
  child.stdout?.on('data', (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr!.on('data', (d: Buffer) => lines.push(`stderr: ${d.toString()}`));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
    // The fencer outlives a killed agent by design: stop it by the PID it wrote next to its socket.
    const fencerPid = Number(await readFile(join(files.baseDir, 'fencer.sock.pid'), 'utf8').catch(() => '0'));
    if (fencerPid > 0) {
      try {
        process.kill(fencerPid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await stopPostmasterOf(files.dataDir);
    await rm(files.baseDir, { recursive: true, force: true });
  });
  return { ...files, child, lines, exited };
}
