/** Keys of a JSON log line that the text format prints in fixed places, or not at all. */
const PLACED = new Set(['level', 'time', 'msg', 'component', 'scope', 'name', 'pid', 'hostname', 'v']);

/** A value as `key=value` text: bare when it is a plain word, JSON (quoted) otherwise. */
function valueText(v: unknown): string {
  if (typeof v === 'string') return /^[A-Za-z0-9_.:/@+-]+$/.test(v) ? v : JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return JSON.stringify(v) ?? String(v);
}

/**
 * One JSON log line (as JsonLinesLogger writes it) as one human line:
 * `2026-01-31T12:00:00.000Z INFO  [dcs] message key=value other="two words"`.
 * Lines that are not JSON objects pass through unchanged.
 */
export function textLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : json + '\n';
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return json.endsWith('\n') ? json : json + '\n';
  const level = String(o['level'] ?? '').toUpperCase().padEnd(5);
  const component = typeof o['component'] === 'string' ? ` [${o['component']}]` : '';
  const fields = Object.entries(o)
    .filter(([k]) => !PLACED.has(k))
    .map(([k, v]) => ` ${k}=${valueText(v)}`)
    .join('');
  const msg = String(o['msg'] ?? '').replace(/\n/g, '\\n');
  return `${String(o['time'] ?? '')} ${level}${component} ${msg}${fields}\n`;
}
