import type { ExporterOptions } from '../../../src/app/exporter/options.js';
import { parseExporterOptions } from '../../../src/app/exporter/options.js';
import { startExporter, type RunningExporter } from '../../../src/app/exporter/run.js';
import { loadConfigured } from '../../../src/app/exporter/configure.js';
import { MemoryLogger } from '../../unit/collectors/fakes.js';
import type { PgServer } from '../../support/postgres-server.js';

/** A small but realistic schema: tables, indexes, a materialized view, a function, sequences, some rows. */
export const SCHEMA_SQL = `
CREATE TABLE accounts (id bigserial PRIMARY KEY, name text UNIQUE, balance numeric NOT NULL DEFAULT 0, created timestamptz NOT NULL DEFAULT now());
CREATE INDEX accounts_created_idx ON accounts (created);
CREATE TABLE orders (id bigserial PRIMARY KEY, account_id bigint REFERENCES accounts, amount numeric, status text);
CREATE INDEX orders_account_idx ON orders (account_id);
CREATE INDEX orders_status_idx ON orders (status);
CREATE TABLE events (id bigserial PRIMARY KEY, payload jsonb, at timestamptz DEFAULT now());
CREATE TABLE audit (id int, note text);
INSERT INTO accounts (name, balance) SELECT 'acct' || g, g FROM generate_series(1, 200) g;
INSERT INTO orders (account_id, amount, status) SELECT 1 + g % 200, g, CASE WHEN g % 3 = 0 THEN 'done' ELSE 'open' END FROM generate_series(1, 2000) g;
INSERT INTO events (payload) SELECT jsonb_build_object('n', g) FROM generate_series(1, 500) g;
UPDATE orders SET status = 'done' WHERE id % 10 = 0;
DELETE FROM events WHERE id % 7 = 0;
CREATE MATERIALIZED VIEW order_totals AS SELECT account_id, sum(amount) AS total FROM orders GROUP BY account_id;
CREATE FUNCTION add_numbers(a int, b int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN a + b; END $$;
SELECT add_numbers(1, 2);
CREATE EXTENSION pg_stat_statements;
SELECT count(*) FROM orders o JOIN accounts a ON a.id = o.account_id WHERE o.status = 'open';
ANALYZE;
`;

/** Parameters of the primary: statistics that the default collectors read. */
export const PRIMARY_PARAMETERS = { shared_preload_libraries: 'pg_stat_statements', track_io_timing: true, track_functions: 'all', track_wal_io_timing: true };

/** Options for an in-process exporter on a free loopback port. */
export function exporterOptions(server: PgServer | string, over: Partial<ExporterOptions> = {}): ExporterOptions {
  const url = typeof server === 'string' ? server : server.connString;
  return { ...parseExporterOptions(['--url', url, '--web.listen-address', '127.0.0.1:0'], {}, '0.1.0'), ...over };
}

/** Starts an exporter in this process against `server`. */
export function startTestExporter(server: PgServer, over: Partial<ExporterOptions> = {}): Promise<RunningExporter & { logger: MemoryLogger }> {
  return startTestExporterAt(server.connString, over);
}

/** Starts an exporter in this process against the server at `url`. */
export async function startTestExporterAt(url: string, over: Partial<ExporterOptions> = {}): Promise<RunningExporter & { logger: MemoryLogger }> {
  const options = exporterOptions(url, over);
  const logger = new MemoryLogger();
  const running = await startExporter(options, await loadConfigured(options), logger);
  return Object.assign(running, { logger });
}

/** Polls `check` every 100 ms until it returns true or `ms` passes; resolves with the last result. */
export async function waitFor(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Status code of GET `path`. */
export async function statusOf(base: string, path: string): Promise<number> {
  return (await fetch(base + path)).status;
}
