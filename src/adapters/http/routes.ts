import type { Exchange } from './exchange.js';

/** A route's handler; a guard is one that throws (access control) or returns. */
export type Handler = (ex: Exchange) => void | Promise<void>;

/** The order methods are listed in `Allow`. */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** One path's handlers by method. */
interface PathRoutes {
  readonly byMethod: Map<string, readonly Handler[]>;
  /** `Allow` of the path: its methods in the usual order, with HEAD where GET is, and OPTIONS. */
  allow: string;
}

/** What a request resolves to. */
export type RouteMatch =
  | { readonly kind: 'handlers'; readonly handlers: readonly Handler[] }
  | { readonly kind: 'not_allowed'; readonly allow: string }
  | { readonly kind: 'not_found' };

/**
 * The API's routes: fixed paths (no parameters) with handlers per method. A path is found
 * whatever its case and with or without one trailing slash (as the router the API used
 * before matched it); HEAD runs the GET handlers; a method the path lacks is `not_allowed`
 * with the path's `Allow`.
 */
export class RouteTable {
  private readonly paths = new Map<string, PathRoutes>();

  /** Adds `handlers` (run in order; guards first) for `methods` on `path`. */
  add(path: string, methods: readonly string[], ...handlers: Handler[]): this {
    const key = RouteTable.key(path);
    let p = this.paths.get(key);
    if (!p) this.paths.set(key, (p = { byMethod: new Map(), allow: '' }));
    for (const m of methods) {
      p.byMethod.set(m, handlers);
      if (m === 'GET' && !p.byMethod.has('HEAD')) p.byMethod.set('HEAD', handlers);
    }
    const listed = new Set([...p.byMethod.keys(), 'OPTIONS']);
    p.allow = [...ALLOW_ORDER.filter((m) => listed.has(m)), ...[...listed].filter((m) => !ALLOW_ORDER.includes(m))].join(', ');
    return this;
  }

  get(path: string, ...handlers: Handler[]): this {
    return this.add(path, ['GET'], ...handlers);
  }

  /** The handlers of `method path`, or why there are none. */
  match(method: string, path: string): RouteMatch {
    const p = this.paths.get(RouteTable.key(path));
    if (!p) return { kind: 'not_found' };
    const handlers = p.byMethod.get(method);
    return handlers ? { kind: 'handlers', handlers } : { kind: 'not_allowed', allow: p.allow };
  }

  private static key(path: string): string {
    const lower = path.toLowerCase();
    return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
  }
}
