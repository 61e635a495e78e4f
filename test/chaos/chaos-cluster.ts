/**
 * The cluster the chaos suite breaks: etcd and three agents (each with its PostgreSQL and
 * fencer) in their own network namespaces of a Lab, driven from the client namespace.
 */
import { mkdtempSync, chmodSync } from 'node:fs';
import type { QueryResult } from 'pg';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterLayout } from '../../scripts/lib/cluster-layout.js';
import { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { isAlive, sleep, waitFor } from '../../scripts/lib/processes.js';
import type { LabHost } from './lab.js';
import { connect, type NodeAddress } from './observers.js';
import { LOG_LEVELS } from '../../src/app/agent/local-config-schema.js';

/** Timings of the measurements the suite reproduces: ttl 20, loop_wait 2, retry_timeout 5. */
export const CHAOS_DCS = { ttl: 20, loop_wait: 2, retry_timeout: 5, maximum_lag_on_failover: 1048576, db: { use_pg_rewind: true, use_slots: true, parameters: {} } };

/** The lab's hosts as the runner in the client namespace gets them. */
export interface LabHosts {
  /** The members of a three-member etcd. */
  readonly etcd: readonly LabHost[];
  readonly nodes: readonly LabHost[];
}

const envLevel = process.env['WARDEN_CHAOS_LOG_LEVEL'];
const logLevel = LOG_LEVELS.find((l) => l === envLevel);
if (envLevel !== undefined && logLevel === undefined) throw new Error(`WARDEN_CHAOS_LOG_LEVEL=${envLevel}: expected one of ${LOG_LEVELS.join(', ')}`);

/** A ClusterRunner whose etcd and nodes live in the lab's namespaces, in a temp folder. */
export function chaosRunner(hosts: LabHosts, dir = mkdtempSync(join(tmpdir(), 'warden-chaos-'))): ClusterRunner {
  chmodSync(dir, 0o755);
  const layout: ClusterLayout = {
    dir,
    scope: 'chaos',
    namespace: '/service',
    etcdClientPort: 2379,
    etcdPeerPort: 2380,
    etcdMembers: hosts.etcd.map((h) => ({ name: h.name, host: h.ip, netns: h.netns })),
    // Distinct PostgreSQL ports: the nodes share the file system, hence the Unix socket directory.
    nodes: hosts.nodes.map((h, i) => ({ name: h.name, apiPort: 8008, pgPort: 5433 + i, host: h.ip, netns: h.netns })),
    dcs: CHAOS_DCS,
    // Small servers: three of them and the writers share two cores.
    dbParameters: { shared_buffers: '32MB', max_connections: 40, wal_keep_size: '256MB' },
    binDir: '/usr/lib/postgresql/15/bin',
    // WARDEN_CHAOS_LOG_LEVEL=debug: every renewal and read in the logs, to follow a rare failure.
    ...(logLevel ? { logLevel } : {}),
  };
  return new ClusterRunner(layout);
}

/** Where each node of the runner can be reached. */
export function addresses(runner: ClusterRunner): NodeAddress[] {
  return runner.layout.nodes.map((n) => ({ name: n.name, host: n.host ?? '127.0.0.1', pgPort: n.pgPort, apiUrl: runner.apiUrl(n.name) }));
}

/** JSON request to one agent; the body parsed when it is JSON. */
export async function api(runner: ClusterRunner, node: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${runner.apiUrl(node)}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await r.text();
  try {
    return { status: r.status, body: text ? JSON.parse(text) : null };
  } catch {
    return { status: r.status, body: text };
  }
}

/** Runs one statement on a node. */
export async function sql(node: NodeAddress, text: string, params: unknown[] = []): Promise<QueryResult> {
  const c = connect(node);
  await c.connect();
  try {
    return await c.query(text, params);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Sends a signal to a PID, quiet when it is gone. */
export function signal(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined || !isAlive(pid)) return;
  try {
    process.kill(pid, sig);
  } catch {
    // gone meanwhile
  }
}

/**
 * Waits until the cluster is whole again: one primary, every other node streaming, and every
 * replica replayed up to the primary's position. Returns the primary's name.
 */
export async function waitConverged(runner: ClusterRunner, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  const nodes = addresses(runner);
  // The whole check again when any part of it fails: the primary may change, or restart, under it.
  return waitFor('one primary, every other node streaming and replayed up to it', timeoutMs, async () => {
    const primary = await runner.waitHealthy(Math.max(1000, deadline - Date.now()));
    const p = nodes.find((n) => n.name === primary)!;
    const target = (await sql(p, 'SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn as string;
    for (let i = 0; i < 100; i++) {
      const behind = await Promise.all(
        nodes.filter((n) => n.name !== primary).map(async (n) => !(await sql(n, 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [target]).catch(() => null))?.rows[0]?.ok),
      );
      if (!behind.some(Boolean)) return primary;
      await sleep(200);
    }
    return undefined;
  }, 200);
}

/** Each node's rows, as a count and a digest (equal digests: the same rows). */
export async function rowDigests(runner: ClusterRunner): Promise<Map<string, { count: number; digest: string }>> {
  const out = new Map<string, { count: number; digest: string }>();
  for (const n of addresses(runner)) {
    const r = await sql(n, "SELECT count(*)::int AS count, md5(coalesce(string_agg(id::text, ',' ORDER BY id), '')) AS digest FROM chaos_writes");
    out.set(n.name, r.rows[0] as { count: number; digest: string });
  }
  return out;
}

/**
 * Each node's rows once they agree, or as they stand after `timeoutMs`. With the writers
 * stopped, nodes can still differ for a while without any loss: a commit that waits for its
 * synchronous standbys' acknowledgment is visible on the standbys that replayed it before it
 * is visible on the primary (PostgreSQL leaves the transaction in progress for its own
 * readers until the wait ends), and an acknowledgment lost on a lossy link comes with the next
 * feedback. Only a difference that lasts counts as rows that went their own way.
 */
export async function settledRowDigests(runner: ClusterRunner, timeoutMs: number): Promise<{ digests: Map<string, { count: number; digest: string }>; converged: boolean }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const digests = await rowDigests(runner);
    const converged = new Set([...digests.values()].map((d) => d.digest)).size === 1;
    if (converged || Date.now() >= deadline) return { digests, converged };
    await sleep(500);
  }
}

/** Every id on a node. */
export async function idsOn(node: NodeAddress): Promise<Set<number>> {
  const r = await sql(node, 'SELECT id FROM chaos_writes');
  return new Set(r.rows.map((x: { id: string }) => Number(x.id)));
}

/** The etcd member that is the raft leader now (asked through etcd's JSON gateway), or null when none answers as one. */
export async function etcdLeaderMember(runner: ClusterRunner, members: readonly LabHost[]): Promise<LabHost | null> {
  for (const m of members) {
    try {
      const r = await fetch(`http://${m.ip}:${runner.layout.etcdClientPort}/v3/maintenance/status`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(1000) });
      const s = (await r.json()) as { header?: { member_id?: string }; leader?: string };
      if (s.leader !== undefined && s.leader === s.header?.member_id) return m;
    } catch {
      // not this one
    }
  }
  return null;
}

/** Waits `ms`, in steps, so an interrupt is seen. */
export async function hold(ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) await sleep(Math.min(250, until - Date.now()));
}
