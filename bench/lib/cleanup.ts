import { progress } from './report.js';

type Cleanup = () => Promise<void> | void;

const cleanups: Cleanup[] = [];
let running: Promise<void> | undefined;
let failed = false;

/** True once the benchmark body threw or was interrupted (cleanups then keep logs for a look). */
export function benchFailed(): boolean {
  return failed;
}

/** Runs every registered cleanup once, newest first; later calls wait for the same run. */
export function runCleanups(): Promise<void> {
  running ??= (async () => {
    for (const c of cleanups.splice(0).reverse()) {
      try {
        await c();
      } catch (e) {
        progress(`cleanup failed: ${(e as Error).message}`);
      }
    }
  })();
  return running;
}

/** Registers a cleanup that runs at the end, on failure and on SIGINT/SIGTERM. */
export function onCleanup(c: Cleanup): void {
  cleanups.push(c);
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    progress(`${sig}: stopping what the benchmark started`);
    failed = true;
    void runCleanups().finally(() => process.exit(130));
  });
}

/**
 * Runs a benchmark's body, then the cleanups, whatever happened; exit code 0 when the body
 * finished (figures that miss a goal are still a successful run), 1 when it threw.
 */
export async function runBenchmark(body: () => Promise<void>): Promise<never> {
  let code = 0;
  try {
    await body();
  } catch (e) {
    progress(`benchmark failed: ${(e as Error).stack ?? String(e)}`);
    code = 1;
    failed = true;
  }
  await runCleanups();
  process.exit(code);
}
