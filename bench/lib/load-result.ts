/** What one run of a load generator measured, over its measured period. Latencies in ms. */
export interface LoadResult {
  readonly url: string;
  readonly connections: number;
  /** The measured period, s (after any warm-up). */
  readonly seconds: number;
  /** When the measured period began, epoch ms, where the load generator logs it. */
  readonly fromMs?: number;
  readonly requests: number;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
  /** Answers with a status other than 2xx/3xx (a health check saying "no" is one: e.g. /primary on a node that was just demoted). */
  readonly non2xx: number;
  /** Requests that got no answer: connection, read or write errors, timeouts. */
  readonly errors: number;
  /** CPU time the watched process used per measured request, µs (10 ms clock-tick resolution). */
  readonly cpuUsPerRequest?: number;
  /** Peak RSS of the watched process during the run, MiB. */
  readonly peakRssMiB?: number;
  /** The slowest answers (at most 5): when each request started, s into the measured period (and epoch ms where known), and how long it took, ms. */
  readonly slowest?: readonly { readonly atS: number; readonly ms: number; readonly startMs?: number }[];
}
