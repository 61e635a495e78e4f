import type { IncomingMessage, ServerResponse } from 'node:http';

/** A node:http request listener. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Path and query string of an origin-form request target (`/path?query`), split at the first
 * `?` without a URL parser (the path of every health check); null for any other form
 * (absolute form, `*`, or a character that needs a closer look: whitespace, `#`), which
 * requestTarget then splits.
 */
export function splitOriginForm(target: string): { path: string; query: string } | null {
  if (target.charCodeAt(0) !== 0x2f /* / */) return null;
  let q = -1;
  for (let i = 1; i < target.length; i++) {
    switch (target.charCodeAt(i)) {
      case 0x3f /* ? */:
        if (q < 0) q = i;
        break;
      case 0x09:
      case 0x0a:
      case 0x0c:
      case 0x0d:
      case 0x20:
      case 0x23 /* # */:
      case 0xa0:
      case 0xfeff:
        return null;
    }
  }
  return q < 0 ? { path: target, query: '' } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

/** `scheme://authority` at the start of an absolute-form request target. */
const ABSOLUTE_FORM_PREFIX = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * Path and query of a request target, for any target the HTTP parser let through: origin form
 * split directly; an absolute form (`http://host:port/path?query`) is its path and query,
 * whatever its authority holds; a fragment is dropped; anything else (`*`, `http:x`) is its
 * own path, which no route has. Never throws: node's URL parser threw on targets such as
 * `http://[::1/primary`, out of the request listener, which took the whole process down.
 */
export function requestTarget(url: string): { path: string; query: string } {
  const split = splitOriginForm(url);
  if (split !== null) return split;
  const authority = ABSOLUTE_FORM_PREFIX.exec(url);
  let rest = authority ? url.slice(authority[0].length) : url;
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  return { path: path === '' && authority ? '/' : path, query: q < 0 ? '' : rest.slice(q + 1) };
}
