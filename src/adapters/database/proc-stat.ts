import { readFile } from 'node:fs/promises';

/** What /proc/PID/stat says of a process that matters here. */
export interface ProcStat {
  /** The kernel's name of the executable (PostgreSQL changes what ps shows, not this). */
  readonly comm: string;
  /** One letter: R, S, D (uninterruptible), Z (zombie), X (dead)... */
  readonly state: string;
  readonly ppid: number;
  /** Start time in clock ticks since boot: with the PID, names one process for good. */
  readonly startTicks: string;
}

/** /proc/PID/stat of `pid`; null when it is gone or unreadable (or off Linux). */
export async function readProcStat(pid: number): Promise<ProcStat | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  // comm may hold spaces and parentheses: it ends at the last ')'.
  const close = stat.lastIndexOf(')');
  const comm = stat.slice(stat.indexOf('(') + 1, close);
  // After ") ": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime
  const fields = stat.slice(close + 2).split(' ');
  return { comm, state: fields[0] ?? '', ppid: Number(fields[1]), startTicks: fields[19] ?? '' };
}
