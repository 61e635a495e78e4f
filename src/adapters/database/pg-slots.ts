import type { WantedSlot } from '../../ports/database.js';
import type { PgSession, SessionLimits, SessionTarget } from './pg-session.js';
import { withClient } from './pg-session.js';

/** A slot name PostgreSQL accepts ([a-z0-9_], at most 63 bytes) made from a member name. */
export function slotNameFor(memberName: string): string {
  return memberName.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 63);
}

interface ExistingSlot {
  slot_name: string;
  slot_type: 'physical' | 'logical';
  database: string | null;
  plugin: string | null;
  active_pid: number | null;
  temporary: boolean;
}

function matches(existing: ExistingSlot, wanted: WantedSlot): boolean {
  if (existing.slot_type !== wanted.type) return false;
  if (wanted.type === 'physical') return true;
  return existing.database === (wanted.database ?? null) && existing.plugin === (wanted.plugin ?? null);
}

/**
 * Creates the missing slots of `wanted` and drops every other non-temporary physical slot
 * (a slot of a member that left would hold WAL forever). Logical slots not wanted are left
 * alone: they belong to consumers we do not know. Returns the problems met; [] is success.
 */
export async function syncSlots(
  session: PgSession,
  target: SessionTarget,
  limits: SessionLimits,
  wanted: readonly WantedSlot[],
): Promise<string[]> {
  const problems: string[] = [];
  const existing = await session.query<ExistingSlot>(
    'SELECT slot_name, slot_type, database, plugin, active_pid, temporary FROM pg_replication_slots',
  );
  const byName = new Map(existing.map((s) => [s.slot_name, s]));
  const wantedNames = new Set(wanted.map((w) => w.name));

  const drop = async (s: ExistingSlot) => {
    // an active slot cannot be dropped: end its walsender first (it reconnects to its own slot)
    if (s.active_pid !== null) {
      await session.query('SELECT pg_terminate_backend($1)', [s.active_pid]);
      for (let i = 0; i < 40; i++) {
        const [row] = await session.query<{ active: boolean }>('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [s.slot_name]);
        if (!row?.active) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await session.query('SELECT pg_drop_replication_slot($1)', [s.slot_name]);
  };

  for (const s of existing) {
    if (s.temporary || wantedNames.has(s.slot_name) || s.slot_type !== 'physical') continue;
    await drop(s).catch((e: Error) => problems.push(`drop ${s.slot_name}: ${e.message}`));
  }
  for (const w of wanted) {
    const have = byName.get(w.name);
    try {
      if (have && matches(have, w)) continue;
      if (have) await drop(have);
      if (w.type === 'physical') {
        await session.query('SELECT pg_create_physical_replication_slot($1, true)', [w.name]);
      } else {
        if (!w.database || !w.plugin) throw new Error('a logical slot needs a database and a plugin');
        // logical slots are created from a connection to their database
        await withClient({ ...target, database: w.database }, limits, (c) =>
          c.query('SELECT pg_create_logical_replication_slot($1, $2)', [w.name, w.plugin]),
        );
      }
    } catch (e) {
      problems.push(`create ${w.name}: ${(e as Error).message}`);
    }
  }
  return problems;
}
