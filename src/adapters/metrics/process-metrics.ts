import { readdirSync, readFileSync } from 'node:fs';
import { familyHeader, ownFamily, type ExpositionFormat, type FamilyMeta } from '../../domain/collectors/exposition.js';
import { formatValue, renderLabelPairs } from '../../domain/collectors/metric-naming.js';

/** Label pairs added to every process metric. */
type LabelPairs = readonly (readonly [string, string])[];

const START_TIME_SECONDS = Math.round((Date.now() - performance.now()) / 10) / 100;

/** A field of /proc/self/status in bytes (the kernel writes kB); null off Linux. */
function statusBytes(status: string, field: string): number | null {
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
  return m ? Number(m[1]) * 1024 : null;
}

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function maxFds(): number | null {
  const m = /^Max open files\s+(\d+)/m.exec(read('/proc/self/limits'));
  return m ? Number(m[1]) : null;
}

function openFds(): number | null {
  try {
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return null;
  }
}

/** What one rendering reads once and every figure is taken from. */
interface ProcessReading {
  readonly cpu: NodeJS.CpuUsage;
  readonly mem: NodeJS.MemoryUsage;
  readonly status: string;
  readonly maxFds: number | null;
}

/** The process and Node.js families, in order, each with where its value comes from (null: not on this system). */
const PROCESS_FAMILIES: readonly { readonly meta: FamilyMeta; readonly value: (r: ProcessReading) => number | null }[] = [
  { meta: ownFamily('process_cpu_user_seconds', 'User CPU time spent, seconds', 'counter', 'seconds'), value: (r) => r.cpu.user / 1e6 },
  { meta: ownFamily('process_cpu_system_seconds', 'System CPU time spent, seconds', 'counter', 'seconds'), value: (r) => r.cpu.system / 1e6 },
  { meta: ownFamily('process_cpu_seconds', 'User and system CPU time spent, seconds', 'counter', 'seconds'), value: (r) => (r.cpu.user + r.cpu.system) / 1e6 },
  { meta: ownFamily('process_start_time_seconds', 'Start time of the process since the Unix epoch, seconds', 'gauge', 'seconds'), value: () => START_TIME_SECONDS },
  { meta: ownFamily('process_resident_memory_bytes', 'Resident memory size, bytes', 'gauge', 'bytes'), value: (r) => statusBytes(r.status, 'VmRSS') ?? r.mem.rss },
  { meta: ownFamily('process_private_memory_bytes', 'Resident private (anonymous) memory, bytes', 'gauge', 'bytes'), value: (r) => statusBytes(r.status, 'RssAnon') },
  { meta: ownFamily('process_virtual_memory_bytes', 'Virtual memory size, bytes', 'gauge', 'bytes'), value: (r) => statusBytes(r.status, 'VmSize') },
  { meta: ownFamily('process_open_fds', 'Open file descriptors', 'gauge'), value: () => openFds() },
  { meta: ownFamily('process_max_fds', 'Maximum number of open file descriptors', 'gauge'), value: (r) => r.maxFds },
  { meta: ownFamily('nodejs_heap_size_total_bytes', 'V8 heap size, bytes', 'gauge', 'bytes'), value: (r) => r.mem.heapTotal },
  { meta: ownFamily('nodejs_heap_size_used_bytes', 'V8 heap used, bytes', 'gauge', 'bytes'), value: (r) => r.mem.heapUsed },
  { meta: ownFamily('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript objects, bytes', 'gauge', 'bytes'), value: (r) => r.mem.external },
];

const VERSION_INFO = ownFamily('nodejs_version_info', 'Node.js version', 'gauge');

/**
 * The process and Node.js metrics of the agent and the exporter (the names prom-client uses for
 * them: process_cpu_seconds_total, process_resident_memory_bytes, nodejs_heap_size_used_bytes...),
 * read from process.* and /proc and rendered at most every `maxAgeMs` per format. Written here
 * rather than through prom-client, whose registry and default collectors hold more memory than
 * the whole exporter's caches.
 */
export class ProcessMetrics {
  private readonly rendered = new Map<ExpositionFormat, { at: number; text: string }>();
  private readonly labels: string;
  private readonly maxFds = maxFds();

  constructor(
    constLabels: LabelPairs,
    private readonly maxAgeMs = 1000,
  ) {
    this.labels = renderLabelPairs(constLabels);
  }

  /** Every family the rendering can hold, in order (one off this system is left out of the text). */
  families(): readonly FamilyMeta[] {
    return [...PROCESS_FAMILIES.map((f) => f.meta), VERSION_INFO];
  }

  /** The latest rendering in `format`, made again when older than maxAgeMs. */
  text(format: ExpositionFormat = 'text'): string {
    const now = performance.now();
    const r = this.rendered.get(format);
    if (r && now - r.at <= this.maxAgeMs) return r.text;
    const text = this.render(format);
    this.rendered.set(format, { at: now, text });
    return text;
  }

  /** Nothing to stop: every figure is read when rendered. */
  close(): void {}

  private render(format: ExpositionFormat): string {
    const reading: ProcessReading = { cpu: process.cpuUsage(), mem: process.memoryUsage(), status: read('/proc/self/status'), maxFds: this.maxFds };
    const l = this.labels;
    let out = '';
    const one = (m: FamilyMeta, value: number | null, labels = l) => {
      if (value === null || !Number.isFinite(value)) return;
      out += familyHeader(m, format) + (labels ? `${m.name}{${labels}} ${formatValue(value)}\n` : `${m.name} ${formatValue(value)}\n`);
    };
    for (const f of PROCESS_FAMILIES) one(f.meta, f.value(reading));
    const [major, minor, patch] = process.versions.node.split('.');
    const info = renderLabelPairs([['version', process.version], ['major', major ?? ''], ['minor', minor ?? ''], ['patch', patch ?? '']]);
    one(VERSION_INFO, 1, l ? `${info},${l}` : info);
    return out;
  }
}
