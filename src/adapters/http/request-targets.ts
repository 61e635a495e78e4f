import type { RequestOptions } from 'node:http';
import { urlToHttpOptions } from 'node:url';

/** A base URL as request options (protocol, host, port, credentials), and the path of its directory. */
export interface RequestTarget {
  readonly secure: boolean;
  readonly options: Readonly<RequestOptions>;
  /** The base URL's path, ending in `/`: a relative path is appended to it. */
  readonly basePath: string;
}

/** Addresses kept parsed at most. */
const MAX_TARGETS = 64;

/**
 * Base URLs (members' API and etcd addresses) parsed once into request options. Handing
 * `http.request` a URL parses and converts it at every call, a few tens of microseconds
 * each on the agent's event loop, for the same handful of addresses all day long.
 */
export class RequestTargets {
  private readonly targets = new Map<string, RequestTarget | null>();

  /** The target of `baseUrl`; null when it is not an http(s) URL. */
  of(baseUrl: string): RequestTarget | null {
    let t = this.targets.get(baseUrl);
    if (t === undefined) {
      t = requestTarget(baseUrl);
      // Members come and go over months: a bound keeps addresses long gone from piling up.
      if (this.targets.size >= MAX_TARGETS) this.targets.clear();
      this.targets.set(baseUrl, t);
    }
    return t;
  }
}

/** `baseUrl` as request options (a path-less URL gets `/`); null when it is not an http(s) URL. */
export function requestTarget(baseUrl: string): RequestTarget | null {
  let url: URL;
  try {
    url = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  } catch {
    return null;
  }
  const secure = url.protocol === 'https:';
  if (!secure && url.protocol !== 'http:') return null;
  const { protocol, hostname, port, auth } = urlToHttpOptions(url);
  return { secure, options: { protocol, hostname, ...(port !== undefined ? { port } : {}), ...(auth ? { auth } : {}) }, basePath: url.pathname };
}
