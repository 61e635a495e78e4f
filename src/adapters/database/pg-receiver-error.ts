import type { ReceiverError } from '../../domain/cluster/model/facts.js';

/** Lines a WAL receiver logs when it fails (PostgreSQL 13-17): what follows is the reason. */
const RECEIVER_FAILURE = /\b(FATAL|ERROR):\s+(could not connect to the primary server|could not receive data from WAL stream|could not start WAL streaming|highest timeline \d+ of the primary is behind)/;

/** A WAL receiver that cannot write what it receives into this node's pg_wal: the storage, not the data. */
const LOCAL_WAL_WRITE = /\bFATAL:\s+(could not (?:write to|create|open|extend|fsync|rename) file "[^"]*pg_wal\/[^"]*"[^:]*: (?:No space left on device|Disk quota exceeded|Read-only file system|Permission denied).*)$/;

/**
 * The receiver error one server log line tells, or null for any other line. A failed
 * connection (a password, pg_hba.conf, the network) and a local pg_wal it cannot write to (a
 * full disk, a read-only file system) are told apart from WAL the upstream no longer has: only
 * the last is cured by a new copy of the data.
 */
export function receiverErrorOf(line: string): ReceiverError | null {
  const local = LOCAL_WAL_WRITE.exec(line);
  if (local) return { cause: 'storage', message: local[1]!.trim().slice(0, 300) };
  const m = RECEIVER_FAILURE.exec(line);
  if (!m) return null;
  const message = line.slice(m.index + m[1]!.length + 1).trim().slice(0, 300);
  if (m[2] === 'could not connect to the primary server') return { cause: 'connection', message };
  if (/requested WAL segment \S+ has already been removed/.test(line)) return { cause: 'wal_removed', message };
  return { cause: 'other', message };
}
