/** Shared set-up of the PgDatabase integration suites: members in temp dirs on free ports. */
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import type { LocalFacts } from '../../../../src/domain/cluster/model/facts.js';
import { PgDatabase, type PgDatabaseOptions } from '../../../../src/adapters/database/pg-database.js';
import { assertPostgresBinaries, freePort, makeBaseDir, stopPostmasterOf } from '../../../support/postgres-server.js';

/** One member under test. */
export interface TestNode {
  readonly name: string;
  readonly port: number;
  readonly baseDir: string;
  readonly dataDir: string;
  readonly connUrl: string;
  readonly db: PgDatabase;
  readonly options: PgDatabaseOptions;
}

/** Credentials used by a suite; undefined passwords give trust on loopback. */
export interface TestCredentials {
  readonly superuser: { username: string; password?: string };
  readonly replication: { username: string; password?: string };
}

const nodes: TestNode[] = [];

/** A PgDatabase for member `name` in a fresh temp dir on a free port (nothing started). */
export async function makeNode(name: string, creds: TestCredentials, extra: Partial<PgDatabaseOptions> = {}): Promise<TestNode> {
  await assertPostgresBinaries();
  const baseDir = await makeBaseDir();
  const port = await freePort();
  const dataDir = join(baseDir, 'data');
  const options: PgDatabaseOptions = {
    name,
    scope: 'itest',
    dataDir,
    listen: `127.0.0.1:${port}`,
    connectAddress: `127.0.0.1:${port}`,
    superuser: creds.superuser,
    replication: creds.replication,
    // small, fast servers on a shared machine; the socket in the temp dir
    localParameters: { unix_socket_directories: baseDir, shared_buffers: '16MB', max_connections: 30, fsync: false },
    initdbOptions: [{ encoding: 'UTF8' }, { locale: 'C' }, 'no-sync'],
    ...extra,
  };
  const node: TestNode = {
    name,
    port,
    baseDir,
    dataDir,
    connUrl: `postgres://127.0.0.1:${port}/postgres`,
    db: new PgDatabase(options),
    options,
  };
  nodes.push(node);
  return node;
}

/** Stops every node's postmaster by PID and deletes the temp dirs (after() hook). */
export async function destroyNodes(): Promise<void> {
  const all = nodes.splice(0);
  await Promise.all(
    all.map(async (n) => {
      n.db.close();
      await stopPostmasterOf(n.dataDir);
      await rm(n.baseDir, { recursive: true, force: true });
    }),
  );
}

/** A client connection as the superuser, over TCP on loopback or (`host` a directory) the Unix socket. */
export async function connect(node: TestNode, host = '127.0.0.1'): Promise<pg.Client> {
  const c = new pg.Client({
    host,
    port: node.port,
    user: node.options.superuser.username,
    password: node.options.superuser.password,
    database: 'postgres',
  });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

/** Runs one statement on a short-lived connection. */
export async function sql<R extends object = Record<string, unknown>>(node: TestNode, text: string, params: unknown[] = [], host?: string): Promise<R[]> {
  const c = await connect(node, host);
  try {
    return (await c.query(text, params)).rows as R[];
  } finally {
    await c.end();
  }
}

/** Probes until `ok` holds (or fails after `timeoutMs` with the last facts). */
export async function probeUntil(node: TestNode, ok: (f: LocalFacts) => boolean, timeoutMs = 20_000): Promise<LocalFacts> {
  const deadline = Date.now() + timeoutMs;
  let facts = await node.db.probe();
  while (!ok(facts)) {
    if (Date.now() > deadline) throw new Error(`${node.name}: condition not met within ${timeoutMs} ms; last facts ${JSON.stringify(facts)}`);
    await new Promise((r) => setTimeout(r, 50));
    facts = await node.db.probe();
  }
  return facts;
}

/**
 * A primary `<prefix>_a` and a replica `<prefix>_b` streaming from it through a slot (before()
 * of the suites that need a pair; destroyNodes() stops them).
 */
export async function streamingPair(prefix: string, creds: TestCredentials, startMs = 30_000): Promise<{ a: TestNode; b: TestNode }> {
  const a = await makeNode(`${prefix}_a`, creds);
  const b = await makeNode(`${prefix}_b`, creds);
  await a.db.initdb();
  await a.db.start({ upstream: null, timeoutMs: startMs });
  await a.db.syncSlots({ drop: [], create: [{ name: b.name, type: 'physical' }], advance: [] });
  await b.db.createReplica({ name: a.name, connUrl: a.connUrl });
  await b.db.start({ upstream: { name: a.name, connUrl: a.connUrl }, slotName: b.name, timeoutMs: startMs });
  await probeUntil(b, (f) => f.replicationState === 'streaming');
  return { a, b };
}

/** A directory the server's OS user may write. */
export async function sharedDir(path: string): Promise<string> {
  await mkdir(path, { recursive: true });
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', path]);
  return path;
}

/** An executable shell script. */
export async function script(path: string, body: string): Promise<string> {
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}
