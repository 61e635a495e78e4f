import { readCluster } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { checkMemberChoice, chooseMember } from './dsn.js';
import { CtlError } from './errors.js';
import { parseFormat, renderTable, type Cell } from './table-format.js';

/** Options of `query`. */
export interface QueryOptions {
  readonly member?: string;
  readonly role?: string;
  /** SQL text. */
  readonly command?: string;
  /** File holding the SQL (`-` reads stdin). */
  readonly file?: string;
  readonly format?: string;
  /** Column separator of the tsv format (default a tab). */
  readonly delimiter?: string;
  readonly user?: string;
  readonly password?: string;
  readonly dbname?: string;
}

/**
 * A value as pg returned it, kept faithful for json/yaml: NULL stays null, arrays stay
 * lists, json/jsonb stay objects. Timestamps become ISO 8601, bytea `\\x...` hex text.
 */
export function cell(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
  if (v instanceof Uint8Array) return `\\x${Buffer.from(v).toString('hex')}`;
  if (Array.isArray(v)) return v.map((x) => cell(x));
  if (typeof v === 'object') return JSON.parse(JSON.stringify(v)) as Cell;
  return String(v);
}

/** `query`: run one SQL statement on a member (the leader by default) and print the result as a table. */
export async function query(ctx: CtlContext, opts: QueryOptions): Promise<void> {
  if (opts.command !== undefined && opts.file !== undefined) throw new CtlError('invalid_query', 'give -c SQL or --file FILE, not both');
  if (opts.command === undefined && opts.file === undefined) throw new CtlError('invalid_query', 'query needs -c SQL (or --file FILE)');
  checkMemberChoice(opts.member, opts.role);
  const format = parseFormat(opts.format);
  const sql = opts.command ?? (opts.file !== undefined ? await ctx.readFile(opts.file) : undefined);
  if (!sql || !sql.trim()) throw new CtlError('invalid_query', opts.command === undefined ? `${opts.file === '-' ? 'standard input' : opts.file} holds no SQL` : 'query needs -c SQL (or --file FILE): the SQL given is empty');
  const member = chooseMember(await readCluster(ctx), opts.member, opts.role);
  if (!member.connUrl) throw new CtlError('no_conn_url', `member ${member.name} publishes no conn_url`);
  const result = await ctx.runSql(
    { connUrl: member.connUrl, ...(opts.user ? { user: opts.user } : {}), ...(opts.password ? { password: opts.password } : {}), ...(opts.dbname ? { dbname: opts.dbname } : {}) },
    sql,
  );
  if (!result.columns.length) {
    ctx.out(`${result.command ?? 'OK'}${typeof result.rowCount === 'number' ? ` ${result.rowCount}` : ''}`.trim());
    return;
  }
  // Column keys must be unique for json/yaml; repeated names (`?column?`) get a suffix.
  const seen = new Map<string, number>();
  const columns = result.columns.map((name) => {
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return { key: n === 1 ? name : `${name}_${n}`, header: name };
  });
  const rows = result.rows.map((r) => Object.fromEntries(columns.map((c, i) => [c.key, cell(r[i])])));
  ctx.out(renderTable({ columns, rows }, format, { delimiter: opts.delimiter ?? '\t' }));
}
