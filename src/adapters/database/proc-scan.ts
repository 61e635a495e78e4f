import { readdir } from 'node:fs/promises';

/**
 * Reads of /proc a scan keeps in flight: enough to keep libuv's thread pool busy, few enough
 * that a turn of the event loop handles only a handful of answers, and that a probe's own file
 * reads queued meanwhile wait behind a handful of requests, not behind one per process.
 */
const IN_FLIGHT = 8;

const PID_ENTRY = /^\d+$/;

/**
 * `pick(pid)` for every process in /proc, IN_FLIGHT at a time; the answers that are not null,
 * in /proc's order ([] when /proc is not readable). A database host runs hundreds or thousands
 * of processes (a PostgreSQL backend per connection): asked about all at once, as the scans
 * once did, 2,000 of them held the agent's event loop 11-18 ms in one turn, and a scan runs
 * before every start of the server, a switchover's demoted primary included.
 */
export async function scanProcesses<T>(pick: (pid: number) => Promise<T | null>): Promise<T[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  const pids: number[] = [];
  for (const e of entries) if (PID_ENTRY.test(e)) pids.push(Number(e));
  const answers: (T | null)[] = new Array<T | null>(pids.length).fill(null);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < pids.length) {
      const i = next++;
      answers[i] = await pick(pids[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, pids.length) }, worker));
  return answers.filter((a): a is T => a !== null);
}
