import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What the agent reads from global/pg_control without starting pg_controldata. */
export interface ControlFile {
  readonly systemIdentifier: string;
  /** `pg_control_version` (1300 for PostgreSQL 13-16, 1700 for 17, 1800 for 18). */
  readonly version: number;
  /** DBState: 1 shut down, 2 shut down in recovery, 3 shutting down, 4 in crash recovery, 5 in archive recovery, 6 in production. */
  readonly state: number;
  /** "Latest checkpoint location": where the last checkpoint record starts. */
  readonly checkpointLsn: number;
  /** "Latest checkpoint's TimeLineID". */
  readonly timeline: number;
  /**
   * The settings a hot standby must match at least, as recorded by the server that last wrote
   * the file (a replica's are its primary's); null for a layout whose offsets are not known.
   */
  readonly standbyMinimums: Readonly<Record<string, number>> | null;
}

/** DBState of a primary that went down cleanly (`shut down`; a replica's is `shut down in recovery`, 2). */
export const DB_SHUTDOWNED = 1;
/** DBState of a server that went down cleanly while in recovery (a replica). */
const DB_SHUTDOWNED_IN_RECOVERY = 2;
/** DBState of a server in archive recovery (a standby), left so when it was killed. */
const DB_IN_ARCHIVE_RECOVERY = 5;

/** True while the server ran as a standby since it last started (PostgreSQL writes "in production" before it takes a write). */
export function ranInRecovery(cf: ControlFile): boolean {
  return cf.state === DB_SHUTDOWNED_IN_RECOVERY || cf.state === DB_IN_ARCHIVE_RECOVERY;
}

/** CRC-32C (Castagnoli, reflected), the checksum PostgreSQL puts at the end of ControlFileData. */
const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** The leading fields lie in the first 56 bytes (the hot-standby settings further in); ControlFileData is 300-400 bytes, its CRC its last field. */
const FIELDS_END = 56;
const MAX_STRUCT = 1024;

/** DBState names as pg_controldata prints them, by value. */
const STATE_NAMES = ['starting up', 'shut down', 'shut down in recovery', 'shutting down', 'in crash recovery', 'in archive recovery', 'in production'] as const;

/** What pg_controldata calls a DBState value ("unrecognized status code" past the known ones). */
export function stateName(state: number): string {
  return STATE_NAMES[state] ?? 'unrecognized status code';
}

/** True for a cluster that went down cleanly, as a primary or in recovery (pg_rewind needs that). */
export function shutDownCleanly(cf: ControlFile): boolean {
  return cf.state === DB_SHUTDOWNED || cf.state === DB_SHUTDOWNED_IN_RECOVERY;
}

/**
 * Where the hot-standby settings sit (MaxConnections and the four ints after it), the same in
 * pg_control_version 1300 (PostgreSQL 13-16), 1700 (17) and 1800 (18): checked on real servers of each.
 */
const STANDBY_SETTING_OFFSETS: Readonly<Record<string, number>> = {
  max_connections: 180,
  max_worker_processes: 184,
  max_wal_senders: 188,
  max_prepared_transactions: 192,
  max_locks_per_transaction: 196,
};
const STANDBY_LAYOUT_VERSIONS: ReadonlySet<number> = new Set([1300, 1700, 1800]);

function readStandbyMinimums(buf: Buffer, version: number): Record<string, number> | null {
  if (!STANDBY_LAYOUT_VERSIONS.has(version) || buf.length < 200) return null;
  const out: Record<string, number> = {};
  for (const [name, offset] of Object.entries(STANDBY_SETTING_OFFSETS)) {
    const v = buf.readInt32LE(offset);
    if (v < 0) return null;
    out[name] = v;
  }
  return out;
}

/**
 * Finds the CRC that ends ControlFileData: PostgreSQL stores, right after the struct's other
 * fields, the CRC-32C of the bytes before it. The struct's size differs between major versions;
 * scanning for the first 4-byte-aligned offset where the running CRC matches the stored one
 * needs no table of sizes (a false match has a chance of 2^-32 per offset), and a file caught
 * half-written (a concurrent update) has no match.
 */
function crcMatches(buf: Buffer): boolean {
  let crc = 0xffffffff;
  const end = Math.min(buf.length - 4, MAX_STRUCT);
  for (let i = 0; i < end; i++) {
    crc = CRC32C_TABLE[(crc ^ buf[i]!) & 0xff]! ^ (crc >>> 8);
    if (i + 1 >= FIELDS_END && (i + 1) % 4 === 0 && ((crc ^ 0xffffffff) >>> 0) === buf.readUInt32LE(i + 1)) return true;
  }
  return false;
}

/**
 * Reads global/pg_control directly (no pg_controldata process: the agent reads it right after a
 * shutdown, on the switchover's critical path, and before every start as a replica; starting a
 * process costs the agent's event loop a fork of its memory). The leading fields' layout is the
 * same from PostgreSQL 11 (pg_control_version 1100) through 18; null for another version, a
 * checksum that does not match, or a file that cannot be read: the caller then asks
 * pg_controldata.
 */
export async function readControlFile(dataDir: string): Promise<ControlFile | null> {
  const buf = await readFile(join(dataDir, 'global', 'pg_control')).catch(() => null);
  if (buf === null || buf.length < FIELDS_END + 4) return null;
  const version = buf.readUInt32LE(8);
  if (version < 1100 || version > 1899 || !crcMatches(buf)) return null;
  return {
    systemIdentifier: buf.readBigUInt64LE(0).toString(),
    version,
    state: buf.readUInt32LE(16),
    checkpointLsn: Number(buf.readBigUInt64LE(32)),
    timeline: buf.readUInt32LE(48),
    standbyMinimums: readStandbyMinimums(buf, version),
  };
}
