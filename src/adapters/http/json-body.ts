import type { Context } from 'koa';

/**
 * Sets `value` as the JSON body, serialised here. Koa would serialise an object itself, but
 * first tests it with `instanceof Response`, and on Node 20 the first touch of the global
 * `Response` loads undici and compiles its WebAssembly HTTP parser: ~10 MiB of RSS the agent
 * never uses. Same headers as Koa's own JSON bodies (`application/json; charset=utf-8`,
 * Content-Length).
 */
export function setJsonBody(ctx: Context, value: unknown): void {
  ctx.type = 'application/json';
  ctx.body = Buffer.from(JSON.stringify(value) ?? 'null');
}
