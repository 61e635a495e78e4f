/**
 * The exporter's configuration reader, run as a short-lived process of its own: it parses the
 * flags (commander), reads and validates the YAML files (yaml, ajv) and writes the result as one
 * JSON document to file descriptor 3, then exits. The long-running exporter thus never loads
 * those libraries, and none of the garbage of parsing stays in its heap.
 *
 *   config-process start <exporter flags...>   flags, collectors, web configuration, targets
 *   config-process collectors <path>           one collector configuration (for /reload)
 */
import { writeSync } from 'node:fs';
import { formatDuration } from '../../domain/collectors/duration.js';
import { versionRangeText } from '../../domain/collectors/select.js';
import { ValidationError } from '../../domain/errors.js';
import { readBuildInfo } from './build-info.js';
import { loadCollectorFiles, type LoadedCollectors } from './config-files.js';
import { loadConfigured, loadExporterFiles } from './configure.js';
import { parseExporterOptions, type ExporterOptions } from './options.js';
import { checkTelemetryPath } from './run.js';
import { encodeConfig, type ConfigAnswer } from './config-protocol.js';

/** Exit code of a bad start (invalid flags or configuration, --fail-fast with the database down). */
const EXIT_INVALID = 2;

function printProblems(title: string, e: ValidationError): void {
  process.stderr.write(`${title}:\n${e.problems.map((p) => `  - ${p.path ? `${p.path}: ` : ''}${p.message}`).join('\n')}\n`);
}

/** The --dry-run listing: one line per collector. */
export function dryRunText(loaded: LoadedCollectors): string {
  const rows = loaded.collectors.map((d) => [d.key, versionRangeText(d), `[${d.tags.join(', ')}]`, `ttl=${formatDuration(d.ttlMs)}`, `timeout=${formatDuration(d.timeoutMs)}`, `metrics=${d.metrics.length}`]);
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]!.length))) ?? [];
  const lines = rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
  return `${lines.join('\n')}\n${loaded.collectors.length} collectors from ${loaded.files.length} file(s) in ${loaded.path}: configuration OK\n`;
}

/** A stage of the start whose files were refused, with what it reads. */
class Refused {
  constructor(
    readonly what: string,
    readonly error: ValidationError,
  ) {}
}

/** Turns a ValidationError into a Refused (other errors go on). */
function refusedAs(what: string): (e: unknown) => Refused {
  return (e) => {
    if (e instanceof ValidationError) return new Refused(what, e);
    throw e;
  };
}

async function start(argv: readonly string[]): Promise<ConfigAnswer> {
  const build = readBuildInfo();
  let options: ExporterOptions;
  try {
    options = parseExporterOptions(argv, process.env, build.version);
    checkTelemetryPath(options);
  } catch (e) {
    if (e instanceof ValidationError) {
      printProblems('warden-exporter: invalid flags', e);
      return { kind: 'exit', code: EXIT_INVALID };
    }
    const code = (e as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return { kind: 'exit', code: 0 };
    throw e;
  }
  // Both read whatever the other finds: one start lists every problem of every file.
  const [collectors, files] = await Promise.all([loadConfigured(options).catch(refusedAs('invalid collector configuration')), loadExporterFiles(options).catch(refusedAs('invalid web configuration or targets file'))]);
  if (collectors instanceof Refused || files instanceof Refused) {
    for (const r of [collectors, files]) {
      if (r instanceof Refused) printProblems(`warden-exporter: ${r.what} (${r.error.problems.length} problem${r.error.problems.length === 1 ? '' : 's'})`, r.error);
    }
    return { kind: 'exit', code: EXIT_INVALID };
  }
  if (options.dryRun) {
    process.stdout.write(dryRunText(collectors));
    return { kind: 'exit', code: 0 };
  }
  return { kind: 'start', options, collectors, files, build };
}

async function collectors(path: string, namespace: string): Promise<ConfigAnswer> {
  try {
    return { kind: 'collectors', collectors: await loadCollectorFiles(path, namespace) };
  } catch (e) {
    if (e instanceof ValidationError) return { kind: 'invalid', code: e.code, problems: e.problems };
    throw e;
  }
}

const [mode, ...rest] = process.argv.slice(2);
const answer = await (mode === 'start' ? start(rest) : mode === 'collectors' ? collectors(rest[0] ?? '', rest[1] ?? 'db') : Promise.reject(new Error(`unknown mode ${mode}`))).catch((e: unknown): ConfigAnswer => {
  // Not a problem of the files (those are listed above): said in one line, not as a stack trace.
  process.stderr.write(`warden-exporter: cannot read the configuration: ${e instanceof Error ? e.message : String(e)}\n`);
  return mode === 'collectors' ? { kind: 'invalid', code: 'invalid_collectors', problems: [{ path: rest[0] ?? '', message: `cannot read: ${e instanceof Error ? e.message : String(e)}` }] } : { kind: 'exit', code: EXIT_INVALID };
});
writeSync(3, encodeConfig(answer));
