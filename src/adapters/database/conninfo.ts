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

/** libpq's separators between keywords and values (C isspace: space, \t, \n, \v, \f, \r). */
function isSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13);
}

/** A keyword's characters. */
function isKeyChar(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

/**
 * Parses a libpq keyword=value conninfo string; returns {} for anything malformed. A replica's
 * probe parses the server's primary_conninfo every tick: the scan compares character codes and
 * copies runs of plain characters at once, rather than testing a pattern per character.
 */
export function parseConninfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const n = text.length;
  let i = 0;
  const skipSpace = () => {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
  };
  for (;;) {
    skipSpace();
    if (i >= n) return out;
    const keyStart = i;
    while (i < n && isKeyChar(text.charCodeAt(i))) i++;
    const key = text.slice(keyStart, i);
    skipSpace();
    if (!key || text.charCodeAt(i) !== 61 /* = */) return {};
    i++;
    skipSpace();
    let value = '';
    if (text.charCodeAt(i) === 39 /* ' */) {
      i++;
      let run = i;
      for (;;) {
        if (i >= n) return {};
        const c = text.charCodeAt(i);
        if (c === 92 /* \ */ && i + 1 < n) {
          value += text.slice(run, i) + text[i + 1];
          i += 2;
          run = i;
        } else if (c === 39) {
          value += text.slice(run, i);
          i++;
          break;
        } else i++;
      }
    } else {
      let run = i;
      while (i < n && !isSpace(text.charCodeAt(i))) {
        if (text.charCodeAt(i) === 92 && i + 1 < n) {
          value += text.slice(run, i);
          i++;
          run = i;
        }
        i++;
      }
      value += text.slice(run, i);
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
