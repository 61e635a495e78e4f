import pg from 'pg';

/**
 * The way that last worked per server (host:port): true when it took a plain connection. A
 * process-wide cache, so short-lived connections to a server without TLS pay for the refused
 * TLS request once, not at every connection.
 */
const plainWorked = new Map<string, boolean>();

/** Whether a failed connection attempt may succeed the other way (with TLS, or without). */
function worthOtherWay(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err.code === 'string' ? err.code : '';
  const message = typeof err.message === 'string' ? err.message : '';
  // The server offers no TLS; its pg_hba rules refuse this way (hostssl / hostnossl); the TLS handshake failed.
  return /does not support SSL/i.test(message) || code.startsWith('28') || code === 'EPROTO' || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS');
}

async function connected(c: pg.Client): Promise<pg.Client> {
  try {
    await c.connect();
    return c;
  } catch (e) {
    c.end().catch(() => undefined);
    throw e;
  }
}

/**
 * Connects the agent's own client as libpq's default `sslmode=prefer` does, which is what
 * `pg_basebackup`, `pg_rewind` and the replicas' `primary_conninfo` use: TLS when the server
 * offers it (without checking its certificate: encryption, not authentication, as `prefer`),
 * else plain, and the other way when the server's `pg_hba.conf` refuses the first (a
 * `hostssl`-only rule for the node's own address). A Unix socket carries no TLS. `prepare`
 * runs on each client before it connects (error listeners).
 */
export async function connectPreferringTls(config: pg.ClientConfig, prepare: (c: pg.Client) => void = () => undefined): Promise<pg.Client> {
  const host = config.host ?? '';
  if (host.startsWith('/') || /[?&]host=%2F|[?&]host=\//i.test(config.connectionString ?? '')) {
    const c = new pg.Client({ ...config, ssl: false });
    prepare(c);
    return connected(c);
  }
  const key = config.connectionString ?? `${host}:${config.port ?? 5432}`;
  const plainFirst = plainWorked.get(key) === true;
  const attempt = (plain: boolean) => {
    const c = new pg.Client({ ...config, ssl: plain ? false : { rejectUnauthorized: false } });
    prepare(c);
    return connected(c);
  };
  try {
    const c = await attempt(plainFirst);
    plainWorked.set(key, plainFirst);
    return c;
  } catch (e) {
    if (!worthOtherWay(e)) throw e;
    const c = await attempt(!plainFirst);
    plainWorked.set(key, !plainFirst);
    return c;
  }
}
