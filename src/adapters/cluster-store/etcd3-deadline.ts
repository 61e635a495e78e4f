import { DcsUnavailableError } from '../../domain/errors.js';

/**
 * Runs `fn` and settles within `ms`: a late answer, or any failure of the client, becomes a
 * `DcsUnavailableError` naming the operation. `onTimeout` lets the caller cancel what it started.
 */
export async function withinDeadline<T>(op: string, ms: number, fn: () => Promise<T>, onTimeout?: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new DcsUnavailableError(`etcd ${op}: no answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([fn(), late]);
  } catch (e) {
    throw asUnavailable(op, e);
  } finally {
    clearTimeout(timer);
  }
}

/** Any failure talking to etcd, as the port's typed error (kept as-is when it already is one). */
export function asUnavailable(op: string, e: unknown): DcsUnavailableError {
  if (e instanceof DcsUnavailableError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  return new DcsUnavailableError(`etcd ${op} failed: ${msg}${OUT_OF_SPACE.test(msg) ? OUT_OF_SPACE_ADVICE : ''}`, e);
}

/** etcd's answer to a write once its backend reached its quota (the NOSPACE alarm is raised). */
const OUT_OF_SPACE = /database space exceeded/;

/** What an operator must do: etcd takes no write again until the alarm is disarmed by hand. */
const OUT_OF_SPACE_ADVICE =
  ' (etcd reached its storage quota and takes no writes until an operator frees space: compact and defragment it, then `etcdctl alarm disarm`;' +
  ' a leader lock already held is still renewed, but no new lock can be taken: no failover, switchover or configuration change can happen meanwhile)';
