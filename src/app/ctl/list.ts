import { readCluster } from './cluster-access.js';
import { clusterTable } from './cluster-table.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';
import { parseFormat, renderTable } from './table-format.js';

/** Options of `list` and `topology`. */
export interface ListOptions {
  /** pretty | json | yaml | tsv */
  readonly format?: string;
  /** Repeat every this many seconds until interrupted. */
  readonly watch?: number | string;
  /** Always show the restart and tag columns. */
  readonly extended?: boolean;
  /** Print the time of the reading above the table (always done while watching). */
  readonly timestamp?: boolean;
}

/** Parses a `-w` value: a positive number of seconds. */
export function parseWatch(value: number | string | undefined): number | null {
  if (value === undefined) return null;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new CtlError('invalid_watch', `--watch needs a positive number of seconds; got ${value}`);
  return n;
}

/**
 * `list`: the member table, once or every `watch` seconds until Ctrl-C. On a terminal each
 * refresh redraws the screen in place; into a pipe or file the tables follow each other.
 */
export async function list(ctx: CtlContext, opts: ListOptions = {}, topology = false): Promise<void> {
  const format = parseFormat(opts.format);
  const watch = parseWatch(opts.watch);
  for (;;) {
    const cluster = await readCluster(ctx);
    const table = renderTable(clusterTable(ctx.scope, cluster, { topology }), format, { allColumns: !!opts.extended });
    const stamped = watch !== null || opts.timestamp ? `${new Date(ctx.now()).toISOString()}\n${table}` : table;
    if (watch === null) {
      ctx.out(stamped);
      return;
    }
    if (ctx.redraw) ctx.redraw(stamped);
    else ctx.out(`${stamped}\n`);
    await ctx.sleep(watch * 1000);
    if (ctx.signal.aborted) return;
  }
}
