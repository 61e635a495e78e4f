import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseUrl } from 'node:url';

/** A node:http request listener. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Path and query string of an origin-form request target (`/path?query`), split at the first
 * `?` without a URL parser (the path of every health check); null for any other form
 * (absolute form, `*`, or a character that needs the full URL parser: whitespace, `#`), which
 * node's URL parser then splits.
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

/** Path and query of a request target: origin form split directly, other forms (absolute, `*`, a fragment) through node's URL parser. */
export function requestTarget(url: string): { path: string; query: string } {
  const split = splitOriginForm(url);
  if (split !== null) return split;
  const parsed = parseUrl(url);
  return { path: parsed.pathname ?? url, query: parsed.query === null || typeof parsed.query !== 'string' ? '' : parsed.query };
}
