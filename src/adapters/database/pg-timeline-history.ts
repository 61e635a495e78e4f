import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HistoryLine } from '../../domain/cluster/model/cluster.js';
import { parseLsn } from '../../domain/cluster/model/lsn.js';

/** Parses a `.history` file: `parentTLI<TAB>switchpoint<TAB>reason` lines into [tl, lsn, reason, null, null]. */
export function parseHistoryFile(text: string): HistoryLine[] {
  const out: HistoryLine[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(\d+)\s+([0-9A-Fa-f]+\/[0-9A-Fa-f]+)\s*(.*)$/.exec(line);
    if (!m) continue;
    const pos = parseLsn(m[2]!);
    if (pos === undefined) continue;
    out.push([Number(m[1]), pos, m[3]!.trim(), null, null]);
  }
  return out;
}

/** History of the highest timeline whose history file is in pg_wal; [] on timeline 1 or when unreadable. */
export async function readTimelineHistory(dataDir: string): Promise<HistoryLine[]> {
  try {
    const walDir = join(dataDir, 'pg_wal');
    const files = (await readdir(walDir)).filter((f) => /^[0-9A-F]{8}\.history$/.test(f)).sort();
    const last = files[files.length - 1];
    if (!last) return [];
    return parseHistoryFile(await readFile(join(walDir, last), 'utf8'));
  } catch {
    return [];
  }
}

/** The highest timeline whose history file is in pg_wal (1 when none); null when pg_wal cannot be read. */
export async function highestHistoryTimeline(dataDir: string): Promise<number | null> {
  try {
    const timelines = (await readdir(join(dataDir, 'pg_wal'))).filter((f) => /^[0-9A-F]{8}\.history$/.test(f)).map((f) => parseInt(f.slice(0, 8), 16));
    return Math.max(1, ...timelines);
  } catch {
    return null;
  }
}
