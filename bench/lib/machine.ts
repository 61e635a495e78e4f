import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** What the figures were measured on: they mean little without it on a shared machine. */
export interface MachineInfo {
  readonly nproc: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly kernel: string;
  /** 1, 5 and 15 minute load averages when the benchmark started. */
  readonly loadavg: readonly number[];
  /** How bin/warden.js and bin/warden-exporter.js run the code: compiled dist/ or sources through tsx. */
  readonly codeMode: 'dist (compiled)' | 'src through tsx';
}

/** Reads the CPU model from /proc/cpuinfo (os.cpus() may be empty in containers). */
function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) return line.split(':').slice(1).join(':').trim();
  } catch {
    /* not Linux */
  }
  return cpus()[0]?.model ?? 'unknown';
}

/** Details of this machine and of the code under test. */
export function machineInfo(): MachineInfo {
  return {
    // The machine's, not this process's: a benchmark may pin itself to some of them.
    nproc: Math.max(cpus().length, availableParallelism()),
    cpuModel: cpuModel(),
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    kernel: release(),
    loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
    codeMode: existsSync(join(repoRoot, 'dist', 'app', 'agent', 'main.js')) ? 'dist (compiled)' : 'src through tsx',
  };
}

/** One line describing the machine, printed above every result table. */
export function machineLine(m: MachineInfo = machineInfo()): string {
  return `machine: ${m.nproc} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, Linux ${m.kernel}, load ${m.loadavg.join(' ')}; code: ${m.codeMode}`;
}
