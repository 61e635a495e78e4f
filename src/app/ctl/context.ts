import type { ClusterStore } from '../../ports/cluster-store.js';
import type { RestClient } from './rest-client.js';

/** Where `query` connects, and as whom. */
export interface SqlTarget {
  /** The member's `conn_url` (`postgres://host:port/db`). */
  readonly connUrl: string;
  readonly user?: string;
  readonly password?: string;
  readonly dbname?: string;
}

/** A query result: column names and rows of display values. */
export interface SqlResult {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** Command tag (`INSERT`, `CREATE TABLE`), shown when the statement returns no columns. */
  readonly command?: string;
  readonly rowCount?: number | null;
}

/**
 * What a command may touch. Every effect goes through here so each command is a plain
 * async function, testable with an in-memory cluster store, a fake RestClient and a scripted user.
 */
export interface CtlContext {
  /** Cluster name the store is scoped to. */
  readonly scope: string;
  readonly store: ClusterStore;
  readonly rest: RestClient;
  /** Writes one block of output (a line or a rendered table) to stdout. */
  out(s: string): void;
  /** Writes a warning line to stderr. */
  warn(s: string): void;
  /** Asks a yes/no question; false on "no" or when there is no answer (stdin closed). */
  confirm(q: string): Promise<boolean>;
  /** Asks for a line of text; '' when there is no answer. */
  ask(q: string): Promise<string>;
  /** Asks for a secret (a password): not echoed on a terminal; '' when there is no answer. */
  askHidden(q: string): Promise<string>;
  /** Replaces the screen with `s` (watch loops on a terminal); absent when stdout is not a terminal. */
  readonly redraw?: (s: string) => void;
  /** Wall-clock milliseconds. */
  now(): number;
  /** Waits `ms`, or less when `signal` aborts. */
  sleep(ms: number): Promise<void>;
  /** Aborted on Ctrl-C: watch and wait loops stop at their next turn. */
  readonly signal: AbortSignal;
  /** Opens `text` in the user's editor and returns what was saved. */
  edit(text: string): Promise<string>;
  /** Reads a file (`-` is stdin). */
  readFile(path: string): Promise<string>;
  /** Runs one SQL statement (the `query` command). */
  runSql(target: SqlTarget, sql: string): Promise<SqlResult>;
}
