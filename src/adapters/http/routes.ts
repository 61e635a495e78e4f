import type { Context } from 'koa';

/** HTTP methods the agent API serves. */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A request handler; errors it throws become JSON error responses. */
export type Handler = (ctx: Context) => Promise<void> | void;

/** One route: a fixed path and its handlers by method (GET also answers HEAD). */
export interface Route {
  readonly path: string;
  readonly methods: Partial<Record<Method, Handler>>;
}

/** What a path and method resolve to. */
export type Resolution =
  | { readonly kind: 'handler'; readonly handler: Handler }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'method_not_allowed'; readonly allow: string }
  | { readonly kind: 'options'; readonly allow: string };

/**
 * The agent API's router. Every path is fixed, so one Map lookup resolves a request; an
 * unknown path is 404 and a known path with another method 405 with `Allow` (spec §4),
 * whatever the method (a generic router answers unknown methods with 501).
 */
export class RouteTable {
  private readonly routes = new Map<string, { methods: Partial<Record<string, Handler>>; allow: string }>();

  constructor(routes: readonly Route[]) {
    for (const r of routes) {
      const existing = this.routes.get(r.path)?.methods ?? {};
      const methods: Partial<Record<string, Handler>> = { ...existing, ...r.methods };
      if (methods['GET'] && !methods['HEAD']) methods['HEAD'] = methods['GET'];
      const allow = [...Object.keys(methods), 'OPTIONS'].join(', ');
      this.routes.set(r.path, { methods, allow });
    }
  }

  /** Resolves a request's path and method. */
  resolve(path: string, method: string): Resolution {
    const route = this.routes.get(path);
    if (!route) return { kind: 'not_found' };
    const handler = route.methods[method];
    if (handler) return { kind: 'handler', handler };
    if (method === 'OPTIONS') return { kind: 'options', allow: route.allow };
    return { kind: 'method_not_allowed', allow: route.allow };
  }
}
