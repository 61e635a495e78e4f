// Synchronous reads: the configuration is read at start and on /reload only, and staying off
// libuv's thread pool spares the exporter four threads and their memory.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { yamlMessage } from '../yaml-message.js';
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

/** Parses YAML text; syntax errors become problems naming the file and line. */
export function parseYamlDocument(text: string, source: string, problems: Problem[]): unknown {
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: true });
  if (!Array.isArray(docs)) return null;
  if (docs.length > 1) {
    problems.push({ path: source, message: 'expected one YAML document, found several (remove the --- separators)' });
  }
  const doc = docs[0];
  if (!doc) return null;
  for (const e of doc.errors) {
    const line = e.linePos?.[0];
    problems.push({ path: line ? `${source}:${line.line}:${line.col}` : source, message: yamlMessage(e.message) });
  }
  return doc.errors.length ? null : doc.toJS({ maxAliasCount: 100 });
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
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      problems.push({ path: file, message: `cannot read: ${(e as Error).message}` });
      continue;
    }
    const doc = parseYamlDocument(text, file, problems);
    docs.push({ source: file, doc });
  }
  let collectors: readonly CollectorDefinition[] = [];
  try {
    collectors = loadDefinitions(docs);
    problems.push(...reservedNameProblems(collectors, namespace));
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    problems.push(...e.problems);
  }
  if (problems.length > 0) throw new ValidationError(problems, 'invalid_collectors');
  return { collectors, path, files };
}

/** Reads and parses one YAML file (syntax problems and an unreadable file throw a ValidationError, code invalid_config). */
export async function readYamlFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ValidationError([{ path, message: `cannot read: ${(e as Error).message}` }], 'invalid_config');
  }
  const problems: Problem[] = [];
  const doc = parseYamlDocument(text, path, problems);
  if (problems.length > 0) throw new ValidationError(problems, 'invalid_config');
  return doc;
}
