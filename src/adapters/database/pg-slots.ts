import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SlotPlan } from '../../domain/cluster/ha/decision.js';
import { formatLsn, parseLsn } from '../../domain/cluster/model/lsn.js';
import { ensureOwnedDir, writeOwnedFile } from './owned-files.js';
import type { PgSession, SessionLimits, SessionTarget } from './pg-session.js';
import { withClient } from './pg-session.js';

/** How long one logical slot advance may decode WAL before it is cancelled (the next tick goes on). */
const LOGICAL_ADVANCE_LIMITS: SessionLimits = { connectTimeoutMs: 5_000, statementTimeoutMs: 30_000 };

/** Drops `name` when it exists; an active one's walsender is ended first (a member reconnecting makes it active again only if it still exists). */
async function dropSlot(session: PgSession, name: string): Promise<void> {
  const [row] = await session.query<{ active_pid: number | null }>('SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1', [name]);
  if (!row) return;
  if (row.active_pid !== null) {
    await session.query('SELECT pg_terminate_backend($1)', [row.active_pid]);
    for (let i = 0; i < 40; i++) {
      const [now] = await session.query<{ active: boolean }>('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [name]);
      if (!now?.active) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await session.query('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1', [name]);
}

/**
 * Applies a slot plan to the local server: drops, creations (physical slots reserve WAL at
 * once, so they can be advanced; logical slots are created from a connection to their
 * database), then advances (physical on the probe session, logical from their database, only
 * while inactive and only forward: PostgreSQL refuses to move a slot back and clamps a move to
 * what the server has flushed or replayed). Every step is tried; returns the problems met ([]
 * is success).
 */
export async function applySlotPlan(session: PgSession, target: SessionTarget, limits: SessionLimits, plan: SlotPlan): Promise<string[]> {
  const problems: string[] = [];
  for (const name of plan.drop) {
    await dropSlot(session, name).catch((e: Error) => problems.push(`drop ${name}: ${e.message}`));
  }
  for (const c of plan.create) {
    try {
      if (c.type === 'physical') {
        await session.query(
          "SELECT pg_create_physical_replication_slot($1, true) WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)",
          [c.name],
        );
      } else {
        if (!c.database || !c.plugin) throw new Error('a logical slot needs a database and a plugin');
        await withClient({ ...target, database: c.database }, limits, (client) =>
          client.query('SELECT pg_create_logical_replication_slot($1, $2) WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)', [c.name, c.plugin]),
        );
      }
    } catch (e) {
      problems.push(`create ${c.name}: ${(e as Error).message}`);
    }
  }
  for (const a of plan.advance) {
    try {
      const lsn = formatLsn(a.lsn);
      const [slot] = await session.query<{ slot_type: string; database: string | null }>(
        'SELECT slot_type, database FROM pg_replication_slots WHERE slot_name = $1 AND NOT active',
        [a.name],
      );
      if (!slot) continue;
      const sql =
        "SELECT pg_replication_slot_advance(slot_name, $2::pg_lsn) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active AND coalesce(CASE WHEN slot_type = 'logical' THEN confirmed_flush_lsn ELSE restart_lsn END, '0/0'::pg_lsn) < $2::pg_lsn";
      if (slot.slot_type === 'physical') await session.query(sql, [a.name, lsn]);
      else await withClient({ ...target, database: slot.database ?? 'postgres' }, LOGICAL_ADVANCE_LIMITS, (client) => client.query(sql, [a.name, lsn]));
    } catch (e) {
      problems.push(`advance ${a.name}: ${(e as Error).message}`);
    }
  }
  return problems;
}

/** One logical slot as the primary holds it: its state file's bytes, and the oldest WAL decoding it needs. */
export interface LogicalSlotCopy {
  readonly name: string;
  readonly state: Buffer;
  readonly restartLsn: number;
}

/**
 * Reads the state files of the logical slots `names` from the primary at `source` (a superuser
 * connection: pg_read_binary_file reads from its data directory). Throws when it is not a
 * primary or holds none of them.
 */
export async function readLogicalSlots(source: SessionTarget, limits: SessionLimits, names: readonly string[]): Promise<LogicalSlotCopy[]> {
  const rows = await withClient(source, limits, async (c) => {
    const r = await c.query<{ slot_name: string; state: Buffer; restart_lsn: string }>(
      `SELECT slot_name, pg_read_binary_file('pg_replslot/' || slot_name || '/state') AS state, restart_lsn::text AS restart_lsn
         FROM pg_replication_slots WHERE slot_type = 'logical' AND NOT pg_is_in_recovery() AND slot_name = ANY($1)`,
      [names],
    );
    return r.rows;
  });
  if (rows.length === 0) throw new Error(`the primary holds none of the logical slots ${names.join(', ')} (or it is not a primary)`);
  return rows.map((r) => ({ name: r.slot_name, state: r.state, restartLsn: parseLsn(r.restart_lsn) ?? 0 }));
}

/** Where the oldest WAL segment in the local pg_wal begins (bytes); null when there is none. */
export async function oldestLocalWal(session: PgSession): Promise<number | null> {
  const [row] = await session.query<{ oldest: string | null }>(
    `SELECT (('x' || substr(name, 9, 8))::bit(32)::bigint * 4294967296
             + ('x' || substr(name, 17, 8))::bit(32)::bigint * pg_size_bytes(current_setting('wal_segment_size')))::text AS oldest
       FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$' ORDER BY substr(name, 9) LIMIT 1`,
  );
  return row?.oldest ? Number(row.oldest) : null;
}

/**
 * Puts copied slot state files in place in a stopped server's data directory
 * (`pg_replslot/<name>/state`, written aside then renamed, as PostgreSQL does), owned by the
 * server's user.
 */
export async function writeLogicalSlots(dataDir: string, owner: string | null, slots: readonly LogicalSlotCopy[]): Promise<void> {
  const base = join(dataDir, 'pg_replslot');
  for (const s of slots) {
    const dir = join(base, s.name);
    const tmp = `${dir}.tmp`;
    await rm(tmp, { recursive: true, force: true });
    await ensureOwnedDir(tmp, owner);
    await writeOwnedFile(join(tmp, 'state'), s.state, owner);
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  }
}
