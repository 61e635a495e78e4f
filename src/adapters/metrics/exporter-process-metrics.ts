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

/**
 * The process and Node.js metrics (the names prom-client uses for them: process_cpu_seconds_total,
 * process_resident_memory_bytes, nodejs_heap_size_used_bytes...), read from process.* and /proc
 * and rendered at most every `maxAgeMs` per format. Written here rather than through prom-client,
 * whose registry and default collectors hold more memory than the whole exporter's caches.
 */
export class ExporterProcessMetrics {
  private readonly rendered = new Map<ExpositionFormat, { at: number; text: string }>();
  private readonly labels: string;
  private readonly maxFds = maxFds();

  constructor(
    constLabels: LabelPairs,
    private readonly maxAgeMs = 1000,
  ) {
    this.labels = renderLabelPairs(constLabels);
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
    const cpu = process.cpuUsage();
    const mem = process.memoryUsage();
    const status = read('/proc/self/status');
    const l = this.labels;
    let out = '';
    const one = (m: FamilyMeta, value: number | null, labels = l) => {
      if (value === null || !Number.isFinite(value)) return;
      out += familyHeader(m, format) + (labels ? `${m.name}{${labels}} ${formatValue(value)}\n` : `${m.name} ${formatValue(value)}\n`);
    };
    one(ownFamily('process_cpu_user_seconds', 'User CPU time spent, seconds', 'counter', 'seconds'), cpu.user / 1e6);
    one(ownFamily('process_cpu_system_seconds', 'System CPU time spent, seconds', 'counter', 'seconds'), cpu.system / 1e6);
    one(ownFamily('process_cpu_seconds', 'User and system CPU time spent, seconds', 'counter', 'seconds'), (cpu.user + cpu.system) / 1e6);
    one(ownFamily('process_start_time_seconds', 'Start time of the process since the Unix epoch, seconds', 'gauge', 'seconds'), START_TIME_SECONDS);
    one(ownFamily('process_resident_memory_bytes', 'Resident memory size, bytes', 'gauge', 'bytes'), statusBytes(status, 'VmRSS') ?? mem.rss);
    one(ownFamily('process_private_memory_bytes', 'Resident private (anonymous) memory, bytes', 'gauge', 'bytes'), statusBytes(status, 'RssAnon'));
    one(ownFamily('process_virtual_memory_bytes', 'Virtual memory size, bytes', 'gauge', 'bytes'), statusBytes(status, 'VmSize'));
    one(ownFamily('process_open_fds', 'Open file descriptors', 'gauge'), openFds());
    one(ownFamily('process_max_fds', 'Maximum number of open file descriptors', 'gauge'), this.maxFds);
    one(ownFamily('nodejs_heap_size_total_bytes', 'V8 heap size, bytes', 'gauge', 'bytes'), mem.heapTotal);
    one(ownFamily('nodejs_heap_size_used_bytes', 'V8 heap used, bytes', 'gauge', 'bytes'), mem.heapUsed);
    one(ownFamily('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript objects, bytes', 'gauge', 'bytes'), mem.external);
    const [major, minor, patch] = process.versions.node.split('.');
    const info = renderLabelPairs([['version', process.version], ['major', major ?? ''], ['minor', minor ?? ''], ['patch', patch ?? '']]);
    one(ownFamily('nodejs_version_info', 'Node.js version', 'gauge'), 1, l ? `${info},${l}` : info);
    return out;
  }
}
