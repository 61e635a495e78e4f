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
  return new DcsUnavailableError(`etcd ${op} failed: ${msg}`, e);
}
