/** Host and port of a server, from a member's conn_url. */
export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

/** Parses `postgres://host:port/db` (also `postgresql://`); port defaults to 5432. */
export function endpointFromUrl(connUrl: string): Endpoint {
  let url: URL;
  try {
    url = new URL(connUrl);
  } catch {
    throw new Error(`not a connection URL: ${JSON.stringify(connUrl)}`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new Error(`not a postgres:// URL: ${JSON.stringify(connUrl)}`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw new Error(`connection URL without a host: ${JSON.stringify(connUrl)}`);
  return { host, port: url.port ? Number(url.port) : 5432 };
}

/** The conn_url of an endpoint, as members publish it. */
export function urlFromEndpoint(e: Endpoint): string {
  const host = e.host.includes(':') ? `[${e.host}]` : e.host;
  return `postgres://${host}:${e.port}/postgres`;
}

function quote(value: string): string {
  if (value !== '' && /^[^\s'\\]+$/.test(value)) return value;
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** Builds a libpq keyword=value conninfo string (values quoted as libpq requires); undefined values are left out. */
export function buildConninfo(fields: Readonly<Record<string, string | number | undefined>>): string {
  return Object.entries(fields)
    .filter((kv): kv is [string, string | number] => kv[1] !== undefined)
    .map(([k, v]) => `${k}=${quote(String(v))}`)
    .join(' ');
}

/** Parses a libpq keyword=value conninfo string; returns {} for anything malformed. */
export function parseConninfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  for (;;) {
    skipSpace();
    if (i >= text.length) return out;
    const keyStart = i;
    while (i < text.length && /[A-Za-z0-9_]/.test(text[i]!)) i++;
    const key = text.slice(keyStart, i);
    skipSpace();
    if (!key || text[i] !== '=') return {};
    i++;
    skipSpace();
    let value = '';
    if (text[i] === "'") {
      i++;
      for (;;) {
        if (i >= text.length) return {};
        const c = text[i]!;
        if (c === '\\' && i + 1 < text.length) {
          value += text[i + 1];
          i += 2;
        } else if (c === "'") {
          i++;
          break;
        } else {
          value += c;
          i++;
        }
      }
    } else {
      while (i < text.length && !/\s/.test(text[i]!)) {
        if (text[i] === '\\' && i + 1 < text.length) i++;
        value += text[i];
        i++;
      }
    }
    out[key] = value;
  }
}

/** The conn_url of the server a primary_conninfo points to; null when it names none. */
export function upstreamUrlFromConninfo(conninfo: string): string | null {
  const fields = parseConninfo(conninfo);
  const host = fields['host'] ?? fields['hostaddr'];
  if (!host) return null;
  const port = Number(fields['port'] ?? 5432);
  return urlFromEndpoint({ host: host.split(',')[0]!, port: Number.isFinite(port) ? port : 5432 });
}
