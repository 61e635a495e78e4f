/** Formats a byte position as PostgreSQL prints an LSN: `0/4000060`. */
export function formatLsn(position: number): string {
  const hi = Math.floor(position / 2 ** 32);
  const lo = position - hi * 2 ** 32;
  return `${hi.toString(16).toUpperCase()}/${lo.toString(16).toUpperCase()}`;
}

/** Parses `X/Y` into a byte position; undefined for anything else. */
export function parseLsn(text: string): number | undefined {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!m) return undefined;
  return parseInt(m[1]!, 16) * 2 ** 32 + parseInt(m[2]!, 16);
}
