import type { HistoryLine } from '../../domain/cluster/model/cluster.js';
import { formatLsn } from '../../domain/cluster/model/lsn.js';
import { callAny, isOk, preferring, readCluster } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';
import { parseFormat, renderTable, type Column } from './table-format.js';

/** Options of `history`. */
export interface HistoryOptions {
  readonly format?: string;
}

const COLUMNS: readonly Column[] = [
  { key: 'TL', header: 'TL', align: 'right' },
  { key: 'LSN', header: 'LSN', align: 'right' },
  { key: 'Reason', header: 'Reason' },
  { key: 'Timestamp', header: 'Timestamp' },
  { key: 'New Leader', header: 'New Leader' },
];

/** Validates a `GET /history` body: `[[timeline, lsn, reason, timestamp, new_leader], ...]`. */
function parseHistoryBody(body: unknown): HistoryLine[] {
  if (!Array.isArray(body)) throw new CtlError('bad_answer', 'GET /history did not return a list');
  return body.map((l: unknown) => {
    if (!Array.isArray(l) || typeof l[0] !== 'number' || typeof l[1] !== 'number') throw new CtlError('bad_answer', 'GET /history returned a malformed line');
    return [l[0], l[1], String(l[2] ?? ''), typeof l[3] === 'string' ? l[3] : null, typeof l[4] === 'string' ? l[4] : null] as const;
  });
}

/** `history`: past promotions, from the DCS history key (else the leader's GET /history). */
export async function history(ctx: CtlContext, opts: HistoryOptions = {}): Promise<void> {
  const format = parseFormat(opts.format);
  const cluster = await readCluster(ctx);
  let lines: readonly HistoryLine[] | null = cluster.history?.lines ?? null;
  if (lines === null && cluster.members.length) {
    const { member, res } = await callAny(ctx, preferring(cluster, cluster.leader?.name), 'GET', 'history', undefined, { timeoutMs: 10_000 });
    if (!isOk(res)) throw new CtlError('api_error', `GET /history on ${member.name} failed: HTTP ${res.status}`);
    lines = parseHistoryBody(res.body);
  }
  // Scripts get the byte position, as GET /history and patronictl give it; people get PostgreSQL's notation.
  const lsnOf = (lsn: number) => (format === 'pretty' ? formatLsn(lsn) : lsn);
  const rows = (lines ?? []).map(([tl, lsn, reason, ts, who]) => ({ TL: tl, LSN: lsnOf(lsn), Reason: reason, Timestamp: ts, 'New Leader': who }));
  ctx.out(renderTable({ columns: COLUMNS, rows }, format));
}
