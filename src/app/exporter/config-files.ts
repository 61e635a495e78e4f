// Synchronous reads: the configuration is read at start and on /reload only, and staying off
// libuv's thread pool spares the exporter four threads and their memory.
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseYamlText, readConfigText, type YamlIssue } from '../yaml-read.js';
import type { CollectorDefinition } from '../../domain/collectors/collector.js';
import { loadDefinitions, reservedNameProblems, type DefinitionDocument } from '../../domain/collectors/definitions.js';
import { ValidationError, type Problem } from '../../domain/errors.js';

/** The collector set shipped with the package: `collectors/` at the package root (same depth from src/ and dist/). */
export const BUNDLED_COLLECTORS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../collectors');
/** The collector set for pgBouncer admin consoles shipped with the package. */
export const BUNDLED_PGBOUNCER_COLLECTORS_DIR = join(BUNDLED_COLLECTORS_DIR, 'pgbouncer');

/** A loaded configuration and where it came from. */
export interface LoadedCollectors {
  readonly collectors: readonly CollectorDefinition[];
  /** The file or folder read. */
  readonly path: string;
  readonly files: readonly string[];
}

async function yamlFiles(path: string): Promise<string[]> {
  const info = statSync(path);
  if (!info.isDirectory()) return [path];
  const names = readdirSync(path).filter((n) => /\.ya?ml$/i.test(n)).sort();
  return names.map((n) => join(path, n));
}

/** A YAML issue of `source` as a problem: `file:line:column`, or the file and the value's path. */
function yamlProblem(source: string, issue: YamlIssue): Problem {
  const path = issue.line !== undefined ? `${source}:${issue.line}:${issue.col ?? 1}` : issue.path ? `${source}: ${issue.path}` : source;
  return { path, message: issue.message };
}

/**
 * Parses YAML text; syntax errors, what a configuration cannot hold (duplicate keys, unknown
 * tags, aliases that loop or expand too far, deep nesting, sizes) and several documents
 * become problems naming the file and line. Never throws.
 */
export function parseYamlDocument(text: string, source: string, problems: Problem[]): unknown {
  const parsed = parseYamlText(text);
  problems.push(...parsed.issues.map((i) => yamlProblem(source, i)));
  return parsed.issues.length ? null : parsed.value;
}

/** A word (a name, a value) of more than this many characters is cut in a problem: the file holds it whole. */
const WORD_MAX = 100;

/** `message` with each word longer than WORD_MAX cut, saying how long it was. */
export function shortenWords(message: string): string {
  return message.replace(/\S{101,}/g, (w) => `${w.slice(0, WORD_MAX - 20)}... (${w.length} characters)`);
}

/** The text of a configuration file; a problem (unreadable, too large, not UTF-8) and null otherwise. */
function readText(file: string, problems: Problem[]): string | null {
  const read = readConfigText(file);
  if ('text' in read) return read.text;
  problems.push(read.unreadable ? { path: file, message: `cannot read: ${read.issue.message}` } : yamlProblem(file, read.issue));
  return null;
}

/**
 * Reads a YAML file, or every *.yml / *.yaml of a folder in lexical order, and validates the
 * collectors. Throws a ValidationError (code invalid_collectors) listing every problem.
 */
export async function loadCollectorFiles(path: string = BUNDLED_COLLECTORS_DIR, namespace = 'db'): Promise<LoadedCollectors> {
  let files: string[];
  try {
    files = await yamlFiles(path);
  } catch (e) {
    throw new ValidationError([{ path, message: `cannot read collector config: ${(e as Error).message}` }], 'invalid_collectors');
  }
  if (files.length === 0) throw new ValidationError([{ path, message: 'no *.yml file in this folder' }], 'invalid_collectors');
  const problems: Problem[] = [];
  const docs: DefinitionDocument[] = [];
  for (const file of files) {
    const text = readText(file, problems);
    if (text === null) continue;
    const doc = parseYamlDocument(text, file, problems);
    docs.push({ source: file, doc });
  }
  let collectors: readonly CollectorDefinition[] = [];
  try {
    collectors = loadDefinitions(docs);
    problems.push(...reservedNameProblems(collectors, namespace));
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    // "No collector defined" says nothing more when a file could not be read.
    problems.push(...e.problems.filter((p) => !(problems.length > 0 && p.path === '')).map((p) => (p.path === '' ? { path, message: p.message } : p)));
  }
  if (problems.length > 0) throw new ValidationError(problems.map((p) => ({ path: p.path, message: shortenWords(p.message) })), 'invalid_collectors');
  return { collectors, path, files };
}

/** Reads and parses one YAML file (syntax problems and an unreadable file throw a ValidationError, code invalid_config). */
export async function readYamlFile(path: string): Promise<unknown> {
  const problems: Problem[] = [];
  const text = readText(path, problems);
  if (text === null) throw new ValidationError(problems, 'invalid_config');
  const doc = parseYamlDocument(text, path, problems);
  if (problems.length > 0) throw new ValidationError(problems, 'invalid_config');
  return doc;
}
