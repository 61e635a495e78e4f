/** synchronous_standby_names parsed: who must confirm a commit, and how many of them. */
export interface SyncNamesSpec {
  readonly method: 'first' | 'any';
  readonly num: number;
  /** Standby names in priority order; `*` matches any standby. */
  readonly names: readonly string[];
}

function splitNames(list: string): string[] {
  return list
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean)
    .map((n) => (n.startsWith('"') && n.endsWith('"') && n.length >= 2 ? n.slice(1, -1).replace(/""/g, '"') : n.toLowerCase()));
}

/**
 * Parses the three forms PostgreSQL accepts: `FIRST n (a, b)`, `ANY n (a, b)`, `n (a, b)`
 * and a bare list `a, b` (= FIRST 1). Unquoted names compare case-insensitively, as in
 * PostgreSQL. Null for an empty value (asynchronous replication).
 */
export function parseSyncNames(value: string): SyncNamesSpec | null {
  const text = value.trim();
  if (!text) return null;
  const m = /^(?:(first|any)\s+)?(\d+)\s*\((.*)\)$/is.exec(text);
  if (m) {
    const names = splitNames(m[3]!);
    const num = Number(m[2]);
    if (!names.length || num < 1) return null;
    return { method: (m[1]?.toLowerCase() as 'first' | 'any' | undefined) ?? 'first', num, names };
  }
  const names = splitNames(text);
  return names.length ? { method: 'first', num: 1, names } : null;
}

/** Priority of a standby in the list (1 = highest), 0 when it is not listed. */
export function syncPriority(spec: SyncNamesSpec, applicationName: string): number {
  const lower = applicationName.toLowerCase();
  const i = spec.names.findIndex((n) => n === '*' || n === applicationName || n === lower);
  return i < 0 ? 0 : i + 1;
}
