/** One `name = value` (or `name value`) line of a PostgreSQL configuration file. */
export interface ConfLine {
  /** The parameter's name, lowercase. */
  readonly name: string;
  /** The value as written (quoted or not). */
  readonly raw: string;
}

/** The setting a configuration file line holds; null for a comment, a blank line or anything else. */
export function confLine(line: string): ConfLine | null {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_$.]*)\s*=?\s*('(?:[^'\\]|''|\\.)*'|[^\s#]*)/.exec(line);
  return m ? { name: m[1]!.toLowerCase(), raw: m[2]! } : null;
}
