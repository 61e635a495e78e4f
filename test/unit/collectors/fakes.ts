import type { SqlRows } from '../../../src/domain/collectors/samples.js';
import { SqlError } from '../../../src/domain/collectors/sql-error.js';
import type { SqlClient, SqlQueryOptions } from '../../../src/ports/sql.js';

/** A query handler: rows, or an Error to throw. */
export type FakeHandler = (opts: SqlQueryOptions) => SqlRows | Error;

/**
 * A scripted SqlClient: answers the exporter's own probe/planning queries from its fields
 * (version, role, databases, extensions, down) and collector queries from handlers matched by
 * regular expression; records every call and the highest number of queries running at once.
 */
export class FakeSql implements SqlClient {
  version = 150004;
  inRecovery = false;
  down = false;
  databases = ['postgres'];
  extensions: Record<string, string[]> = { postgres: ['plpgsql'] };
  delayMs = 0;
  readonly calls: { sql: string; database?: string; timeoutMs: number }[] = [];
  active = 0;
  maxActive = 0;
  retained: string[][] = [];
  closed = false;
  private readonly handlers: [RegExp, FakeHandler][] = [];

  /** Answers queries matching `re` (first match wins, in the order added). */
  on(re: RegExp, handler: FakeHandler | SqlRows | Error): this {
    this.handlers.push([re, typeof handler === 'function' ? handler : () => handler]);
    return this;
  }

  /** Calls whose SQL matches `re`. */
  count(re: RegExp): number {
    return this.calls.filter((c) => re.test(c.sql)).length;
  }

  async query(sql: string, opts: SqlQueryOptions): Promise<SqlRows> {
    this.calls.push({ sql, timeoutMs: opts.timeoutMs, ...(opts.database !== undefined ? { database: opts.database } : {}) });
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    try {
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      if (this.down) throw new SqlError('sql_unavailable', 'connect ECONNREFUSED 127.0.0.1:5432');
      const db = opts.database ?? this.databases[0]!;
      if (sql.startsWith("SELECT current_setting('server_version_num'), pg_is_in_recovery()")) {
        return { columns: ['v', 'r'], rows: [[String(this.version), this.inRecovery ? 't' : 'f']] };
      }
      if (sql.startsWith('SELECT current_database()')) {
        return { columns: ['d', 'v', 'r', 'e'], rows: [[db, String(this.version), this.inRecovery ? 't' : 'f', (this.extensions[db] ?? []).join(',')]] };
      }
      if (sql.startsWith('SELECT datname FROM pg_database')) return { columns: ['datname'], rows: this.databases.map((d) => [d]) };
      if (sql.startsWith("SELECT coalesce(string_agg(extname, ','), '') FROM pg_extension")) return { columns: ['e'], rows: [[(this.extensions[db] ?? []).join(',')]] };
      for (const [re, h] of this.handlers) {
        if (re.test(sql)) {
          const r = h(opts);
          if (r instanceof Error) throw r;
          return r;
        }
      }
      throw new SqlError('sql_failed', `no fake answer for: ${sql}`, '42P01');
    } finally {
      this.active--;
    }
  }

  async retainDatabases(keep: readonly string[]): Promise<void> {
    this.retained.push([...keep]);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

export { MemoryLogger } from '../../../src/adapters/logger/memory-logger.js';
