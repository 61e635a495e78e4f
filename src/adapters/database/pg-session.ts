import pg from 'pg';
import type { Logger } from '../../ports/logger.js';
import { connectPreferringTls } from './pg-tls-prefer.js';

/** How to reach the local server as the superuser. */
export interface SessionTarget {
  /** An address, or the directory of the server's Unix socket (a path). */
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password?: string;
  readonly database?: string;
}

/** Limits of one connection; probes use short ones, maintenance longer ones. */
export interface SessionLimits {
  readonly connectTimeoutMs: number;
  readonly statementTimeoutMs: number;
}

function clientConfig(t: SessionTarget, l: SessionLimits, applicationName: string): pg.ClientConfig {
  return {
    host: t.host,
    port: t.port,
    user: t.user,
    password: t.password,
    database: t.database ?? 'postgres',
    application_name: applicationName,
    connectionTimeoutMillis: l.connectTimeoutMs,
    statement_timeout: l.statementTimeoutMs,
    // client-side bound too: a hung server never answers a statement_timeout
    query_timeout: l.statementTimeoutMs + 500,
    keepAlive: true,
  };
}

/** A connection error (as opposed to an SQL error the server reported with a SQLSTATE). */
function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || code.startsWith('08') || code === '57P01' || code === '57P03';
}

/**
 * One long-lived connection for the queries of every HA tick (reconnects on failure). A query
 * that fails on a connection that had been idle is retried once on a fresh one, so a server
 * restart between two probes costs no false "not running". Statements run one at a time in
 * the order asked (the driver deprecates queueing them itself), and the time one waits behind
 * another counts against its own timeout, so a hung server fails every waiting statement
 * within one timeout as before.
 */
export class PgSession {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  /** Settles when the statements asked so far have. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    /** Where to connect, asked at each (re)connect. */
    private readonly target: () => SessionTarget | Promise<SessionTarget>,
    private readonly limits: SessionLimits,
    private readonly logger: Logger,
  ) {}

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const c = await connectPreferringTls(clientConfig(await this.target(), this.limits, 'warden'), (attempt) =>
        attempt.on('error', (e) => {
          this.logger.debug('probe connection lost', { error: e.message });
          this.drop(attempt);
        }),
      );
      this.client = c;
      return c;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private drop(c: pg.Client): void {
    if (this.client === c) this.client = null;
    c.end().catch(() => undefined);
  }

  /** Runs one statement; rows come back with every column as the driver parsed it (use ::text casts). */
  async query<R extends object>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    const reused = this.client !== null;
    const c = await this.connect();
    try {
      return await this.inTurn<R>(c, sql, params);
    } catch (e) {
      if (!isConnectionError(e)) throw e;
      this.drop(c);
      // a timed-out server would only time out again: retry just a connection the server closed
      if (!reused || /timeout/i.test((e as Error).message)) throw e;
      const fresh = await this.connect();
      try {
        return await this.inTurn<R>(fresh, sql, params);
      } catch (e2) {
        if (isConnectionError(e2)) this.drop(fresh);
        throw e2;
      }
    }
  }

  /**
   * Sends the statement on `c` once the ones asked before it have settled. Its client-side
   * bound runs from now, as the driver's own runs from the call that queues a statement.
   */
  private inTurn<R extends object>(c: pg.Client, sql: string, params: readonly unknown[]): Promise<R[]> {
    const deadline = Date.now() + this.limits.statementTimeoutMs + 500;
    const run = this.tail.then(async () => {
      const left = deadline - Date.now();
      // the driver's own message for a statement that waited out its bound
      if (left <= 0) throw new Error('Query read timeout');
      // the driver reads a statement's own query_timeout; its types do not declare it
      const statement: pg.QueryConfig & { query_timeout: number } = { text: sql, values: params as unknown[], query_timeout: left };
      return (await c.query(statement)).rows as R[];
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Closes the connection (it reopens on the next query). */
  close(): void {
    if (this.client) this.drop(this.client);
  }
}

/** Runs `fn` on a dedicated short-lived connection (long statements, another database). */
export async function withClient<T>(
  target: SessionTarget,
  limits: SessionLimits,
  fn: (c: pg.Client) => Promise<T>,
): Promise<T> {
  const c = await connectPreferringTls(clientConfig(target, limits, 'warden'), (attempt) => attempt.on('error', () => undefined));
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}
