import { closeSync, openSync, readSync } from 'node:fs';
import { Composer, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, Parser, type CST, type Document } from 'yaml';
import { yamlMessage } from './yaml-message.js';

// Reading a configuration file as YAML, bounded: the agent's node file, the exporter's
// collector, web and targets files and wardenctl's file all go through here. A file of any
// content gets either a value or a list of issues, quickly, and never an exception: the size
// is capped before parsing, bytes that are not UTF-8 are refused (not read as U+FFFD), and
// what the parser accepts but a configuration cannot hold is refused with its line (duplicate
// keys, keys that are lists or mappings, aliases without an anchor or inside their own
// anchor, tags other than YAML's core ones) or its path (nesting, expansion through aliases).

/** How much a configuration file may hold. */
export interface YamlLimits {
  /** Size of the file (or text), in bytes. */
  readonly maxBytes: number;
  /** Mappings and lists nested in each other, aliases expanded. */
  readonly maxDepth: number;
  /** Values in the document once its aliases are expanded (the billion laughs bound). */
  readonly maxNodes: number;
  /** yaml's own alias bound (see its maxAliasCount). */
  readonly maxAliasCount: number;
}

/**
 * The limits of a configuration file: the bundled collector set is 60 KiB in all. The parser
 * reads about a MiB a second at worst (a flow list of one-digit items), so a file at the limit
 * still takes about a second.
 */
export const CONFIG_YAML_LIMITS: YamlLimits = { maxBytes: 1024 * 1024, maxDepth: 64, maxNodes: 1_000_000, maxAliasCount: 100 };

/** The limits of a node's own file (the agent's, which wardenctl reads too): a few KiB in practice. */
export const NODE_FILE_LIMITS: YamlLimits = { ...CONFIG_YAML_LIMITS, maxBytes: 256 * 1024, maxNodes: 250_000 };

/** One thing wrong with a YAML text: where (a line and column, or a path in the value) and what. */
export interface YamlIssue {
  readonly line?: number;
  readonly col?: number;
  /** The value's path (`a.b[0]`) when the issue is about the value rather than a place in the text. */
  readonly path?: string;
  readonly message: string;
}

/** What reading a file gave: its text, or why there is none (`unreadable` when the system refused it). */
export type FileText = { readonly text: string } | { readonly issue: YamlIssue; readonly unreadable: boolean };

const mib = (n: number) => (n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`);

/**
 * The bytes of a file, read synchronously and at most `maxBytes` of them: a device such as
 * /dev/zero, or a pipe that never ends, is cut there (`whole` false) instead of filling the memory.
 * Throws what the system says when the file cannot be read.
 */
export function readBounded(path: string, maxBytes: number): { readonly bytes: Buffer; readonly whole: boolean } {
  const fd = openSync(path, 'r');
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    const buf = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, maxBytes + 1 - total), null);
      if (n === 0) break;
      total += n;
      chunks.push(Buffer.from(buf.subarray(0, n)));
      if (total > maxBytes) return { bytes: Buffer.concat(chunks).subarray(0, maxBytes), whole: false };
    }
  } finally {
    closeSync(fd);
  }
  return { bytes: Buffer.concat(chunks), whole: true };
}

/** The text of a configuration file, at most `limits.maxBytes` of it (see readBounded), decoded as strict UTF-8. */
export function readConfigText(path: string, limits: YamlLimits = CONFIG_YAML_LIMITS): FileText {
  let read: { bytes: Buffer; whole: boolean };
  try {
    read = readBounded(path, limits.maxBytes);
  } catch (e) {
    return { issue: { message: (e as Error).message }, unreadable: true };
  }
  if (!read.whole) return { issue: { message: `the file holds more than ${mib(limits.maxBytes)}, more than a configuration file may: is it the right file?` }, unreadable: false };
  return decodeUtf8(read.bytes);
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** `bytes` as UTF-8 text; bytes that are not UTF-8 are an issue at their line and column (counted in bytes). */
export function decodeUtf8(bytes: Uint8Array): FileText {
  try {
    return { text: STRICT_UTF8.decode(bytes) };
  } catch {
    const at = firstInvalidUtf8(bytes);
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < at; i++) {
      if (bytes[i] === 0x0a) {
        line++;
        lineStart = i + 1;
      }
    }
    return { issue: { line, col: at - lineStart + 1, message: `not UTF-8 text (byte 0x${(bytes[at] ?? 0).toString(16).padStart(2, '0')} at offset ${at}): save the file as UTF-8` }, unreadable: false };
  }
}

/** Offset of the first byte that does not belong to a well-formed UTF-8 sequence. */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    const [n, min, max] = c < 0x80 ? [0, 0, 0] : c >= 0xc2 && c <= 0xdf ? [1, 0x80, 0xbf] : c === 0xe0 ? [2, 0xa0, 0xbf] : c === 0xed ? [2, 0x80, 0x9f] : c >= 0xe1 && c <= 0xef ? [2, 0x80, 0xbf] : c === 0xf0 ? [3, 0x90, 0xbf] : c === 0xf4 ? [3, 0x80, 0x8f] : c >= 0xf1 && c <= 0xf3 ? [3, 0x80, 0xbf] : [-1, 0, 0];
    if (n < 0) return i;
    for (let k = 1; k <= n; k++) {
      const x = b[i + k];
      if (x === undefined || x < (k === 1 ? min : 0x80) || x > (k === 1 ? max : 0xbf)) return i;
    }
    i += n + 1;
  }
  return b.length;
}

/** The value of a YAML text, or every issue found; `documents` is how many the text holds. */
export interface ParsedYaml {
  readonly value: unknown;
  readonly issues: readonly YamlIssue[];
  readonly documents: number;
}

/** Tags a configuration may carry: YAML's core schema (and yaml's names for its collections). */
const CORE_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => `tag:yaml.org,2002:${t}`));

/** Issues are listed up to this many: a file of garbage does not need a million lines of them. */
const MAX_ISSUES = 50;

/**
 * Parses a YAML text holding one document (the first is read when there are several, and an
 * issue says so). Never throws: syntax errors, what the text holds that a configuration
 * cannot, and the limits are issues.
 */
export function parseYamlText(text: string, limits: YamlLimits = CONFIG_YAML_LIMITS): ParsedYaml {
  if (text.length > limits.maxBytes) return { value: null, issues: [{ message: `the text holds more than ${mib(limits.maxBytes)}, more than a configuration file may` }], documents: 0 };
  const lines = new LineCounter();
  const where = (offset: number) => (offset >= 0 ? lines.linePos(offset) : {});
  // The parser's tokens first, then the composer: a text that is mostly errors (a JSON document
  // followed by block lines gives one per token) stops at the first ones, where composing them
  // all took seconds; a text nested deeper than the limit is refused before the composer,
  // which recurses into each level.
  const tokens: CST.Token[] = [];
  const syntax: YamlIssue[] = [];
  try {
    for (const token of new Parser(lines.addNewLine).parse(text)) {
      tokens.push(token);
      if (token.type === 'error' && syntax.push({ ...where(token.offset), message: parserMessage(token.message) }) >= MAX_ISSUES) return { value: null, issues: syntax, documents: 0 };
    }
  } catch (e) {
    return { value: null, issues: [{ message: thrownMessage(e) }], documents: 0 };
  }
  const deep = tooDeep(tokens, limits.maxDepth);
  if (deep !== null) return { value: null, issues: [{ ...where(deep), message: `nested more than ${limits.maxDepth} levels deep` }], documents: 0 };
  let docs: Document.Parsed[];
  try {
    // uniqueKeys is checked below, in one pass: the parser's own check compares every key of a
    // mapping with every other (a file of 20,000 keys took seconds, 200,000 minutes).
    docs = [...new Composer({ uniqueKeys: false }).compose(tokens, false, text.length)];
  } catch (e) {
    return { value: null, issues: [{ message: thrownMessage(e) }], documents: 0 };
  }
  const doc = docs[0];
  if (!doc) return { value: null, issues: syntax, documents: 0 };
  const issues: YamlIssue[] = [];
  if (docs.length > 1) issues.push({ message: `expected one YAML document, found ${docs.length} (remove the --- separators)` });
  // A tag the schema cannot resolve is a warning to the parser, which then keeps the text as a
  // string: `password: !!binary c2VjcmV0` would be the password "c2VjcmV0".
  const problems = [...doc.errors, ...doc.warnings.filter((w) => w.code === 'TAG_RESOLVE_FAILED')];
  for (const e of problems) issues.push({ ...where(e.pos[0]), message: e.code === 'TAG_RESOLVE_FAILED' ? tagMessage(e.message) : /call stack/i.test(e.message) ? 'nested too deeply' : parserMessage(e.message) });
  if (problems.length) return { value: null, issues: issues.slice(0, MAX_ISSUES), documents: docs.length };
  issues.push(...nodeIssues(doc, lines));
  if (issues.length) return { value: null, issues: issues.slice(0, MAX_ISSUES), documents: docs.length };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: limits.maxAliasCount });
  } catch (e) {
    const message = thrownMessage(e);
    return { value: null, issues: [{ message: /excessive alias count/i.test(message) ? `its aliases expand to too much data (more than ${limits.maxAliasCount} uses of an anchor that holds aliases itself)` : message }], documents: docs.length };
  }
  issues.push(...valueIssues(value, limits));
  return issues.length ? { value: null, issues: issues.slice(0, MAX_ISSUES), documents: docs.length } : { value, issues, documents: docs.length };
}

/** Offset of the first collection of the parsed text nested deeper than `max`, or null. */
function tooDeep(tokens: readonly CST.Token[], max: number): number | null {
  const stack: [CST.Token | null | undefined, number][] = tokens.map((t) => [t, 0]);
  while (stack.length) {
    const [token, depth] = stack.pop()!;
    if (!token) continue;
    if (token.type === 'document') {
      stack.push([token.value, depth]);
      continue;
    }
    if (token.type !== 'block-map' && token.type !== 'block-seq' && token.type !== 'flow-collection') continue;
    if (depth + 1 > max) return token.offset;
    for (const item of token.items as CST.CollectionItem[]) stack.push([item.key, depth + 1], [item.value, depth + 1]);
  }
  return null;
}

/** A parser message, its first line, cut where it quotes a long piece of the text. */
function parserMessage(message: string): string {
  const line = yamlMessage(message);
  return line.length > 200 ? `${line.slice(0, 180)}... (${line.length} characters)` : line;
}

/** What an unresolved tag means: an unknown one, or a core one its value does not fit (`!!int 1.5`). */
function tagMessage(message: string): string {
  const tag = /Unresolved tag: (\S+)/.exec(message)?.[1] ?? '';
  const short = tag.replace(/^tag:yaml\.org,2002:/, '!!');
  if (CORE_TAGS.has(tag)) return `the value is not what its tag ${short} says`;
  return `unsupported tag ${short}: a configuration holds strings, numbers, booleans, null, mappings and lists`;
}

function thrownMessage(e: unknown): string {
  if (e instanceof RangeError && /call stack/i.test(e.message)) return 'nested too deeply';
  return parserMessage(e instanceof Error ? e.message : String(e));
}

type YamlNode = NonNullable<Document.Parsed['contents']>;

/**
 * What the parser accepts but a configuration cannot hold, found in one pass over the nodes
 * (aliases not followed): two equal keys in a mapping, a key that is a mapping, list or alias,
 * an empty key, a tag outside the core schema, an alias with no anchor before it or inside
 * the node its anchor names.
 */
function nodeIssues(doc: Document.Parsed, lines: LineCounter): YamlIssue[] {
  const issues: YamlIssue[] = [];
  const at = (node: unknown) => {
    const offset = (node as { range?: [number, number, number] } | null)?.range?.[0];
    return offset === undefined ? {} : lines.linePos(offset);
  };
  const add = (node: unknown, message: string) => issues.push({ ...at(node), message });
  // Depth-first in document order, with an exit marker so that `open` holds the collections the current node is in.
  const stack: { node: unknown; exit?: boolean }[] = [{ node: doc.contents }];
  const open = new Set<unknown>();
  // The last node seen with each anchor: what an alias met now names. The parser's own
  // resolve() walks the whole document for each alias (100 aliases in 15,000 keys took a second).
  const anchors = new Map<string, unknown>();
  while (stack.length && issues.length < MAX_ISSUES) {
    const { node, exit } = stack.pop()!;
    if (exit) {
      open.delete(node);
      continue;
    }
    if (node === null || node === undefined) continue;
    const tag = (node as { tag?: string }).tag;
    if (tag !== undefined && !CORE_TAGS.has(tag)) add(node, `unsupported tag ${tag.replace(/^tag:yaml\.org,2002:/, '!!')}: a configuration holds strings, numbers, booleans, null, mappings and lists`);
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target === undefined) add(node, `alias *${node.source} has no anchor &${node.source} before it`);
      else if (open.has(target)) add(node, `alias *${node.source} is inside the node its anchor names: it would contain itself`);
      continue;
    }
    const anchor = (node as { anchor?: string }).anchor;
    if (anchor) anchors.set(anchor, node);
    if (isScalar(node)) continue;
    if (isMap(node)) {
      open.add(node);
      stack.push({ node, exit: true });
      const seen = new Map<string, unknown>();
      for (const pair of node.items) {
        const key = pair.key as YamlNode | null;
        if (key === null || (isScalar(key) && (key.value === null || key.value === ''))) add(key ?? pair.value ?? node, 'empty key');
        else if (!isScalar(key)) add(key, `a key must be a plain value, got ${isAlias(key) ? `alias *${key.source}` : isSeq(key) ? 'a list' : 'a mapping'}`);
        else {
          const v = key.value;
          const id = `${typeof v}:${String(v)}`;
          const first = seen.get(id);
          if (first !== undefined && typeof v !== 'object') add(key, `Map keys must be unique: ${JSON.stringify(String(v))} is also at line ${(at(first) as { line?: number }).line ?? '?'}`);
          else seen.set(id, key);
        }
      }
      for (let i = node.items.length - 1; i >= 0; i--) stack.push({ node: node.items[i]!.value }, { node: node.items[i]!.key });
      continue;
    }
    if (isSeq(node)) {
      open.add(node);
      stack.push({ node, exit: true });
      for (let i = node.items.length - 1; i >= 0; i--) {
        const item = node.items[i];
        // A flow sequence may hold single pairs (`[a: 1]`): their key and value are nodes too.
        if (isPair(item)) stack.push({ node: item.value }, { node: item.key });
        else stack.push({ node: item });
      }
      continue;
    }
    if (isPair(node)) stack.push({ node: node.value }, { node: node.key });
  }
  return issues;
}

const isPlainObject = (v: object) => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/**
 * What the value holds that the nodes did not show: nesting and size once aliases are
 * expanded (each shared node is walked once, its depth and size remembered), a cycle, and
 * values that are not plain data (a YAML 1.1 timestamp is a Date).
 */
function valueIssues(root: unknown, limits: YamlLimits): YamlIssue[] {
  if (root === null || typeof root !== 'object') return [];
  const done = new Map<object, { depth: number; size: number }>();
  interface Frame {
    readonly obj: object;
    readonly path: string;
    readonly entries: [string, unknown][];
    i: number;
    depth: number;
    size: number;
  }
  const entries = (obj: object): [string, unknown][] => (Array.isArray(obj) ? obj.map((v, i) => [`[${i}]`, v] as [string, unknown]) : Object.entries(obj).map(([k, v]) => [k, v] as [string, unknown]));
  const join = (path: string, key: string) => (key.startsWith('[') ? `${path}${key}` : path ? `${path}.${key}` : key);
  const issues: YamlIssue[] = [];
  if (!Array.isArray(root) && !isPlainObject(root)) return [{ path: '', message: 'expected plain data (a mapping or a list)' }];
  const stack: Frame[] = [{ obj: root, path: '', entries: entries(root), i: 0, depth: 0, size: 1 }];
  const onPath = new Set<object>([root]);
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    if (top.i >= top.entries.length) {
      stack.pop();
      onPath.delete(top.obj);
      const result = { depth: top.depth + 1, size: top.size };
      done.set(top.obj, result);
      const parent = stack[stack.length - 1];
      if (parent) {
        parent.depth = Math.max(parent.depth, result.depth);
        parent.size += result.size;
        if (parent.size > limits.maxNodes) return [{ path: parent.path, message: `expands to more than ${limits.maxNodes} values through its aliases` }];
      }
      continue;
    }
    const [key, v] = top.entries[top.i++]!;
    const path = join(top.path, key);
    if (v === null || typeof v !== 'object') {
      if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') issues.push({ path, message: `expected plain data, got a ${typeof v}` });
      top.size++;
      continue;
    }
    if (!Array.isArray(v) && !isPlainObject(v)) {
      issues.push({ path, message: `expected a string, number, boolean, null, mapping or list, got ${v instanceof Date ? 'a timestamp' : (v.constructor?.name ?? 'an object')}` });
      top.size++;
      continue;
    }
    if (onPath.has(v)) {
      issues.push({ path, message: 'contains itself (through an alias)' });
      continue;
    }
    const known = done.get(v);
    if (known) {
      if (stack.length + known.depth > limits.maxDepth) {
        issues.push({ path, message: `nested more than ${limits.maxDepth} levels deep (through an alias)` });
        continue;
      }
      top.depth = Math.max(top.depth, known.depth);
      top.size += known.size;
      if (top.size > limits.maxNodes) return [{ path: top.path, message: `expands to more than ${limits.maxNodes} values through its aliases` }];
      continue;
    }
    if (stack.length >= limits.maxDepth) {
      issues.push({ path, message: `nested more than ${limits.maxDepth} levels deep` });
      continue;
    }
    if (issues.length >= MAX_ISSUES) break;
    onPath.add(v);
    stack.push({ obj: v, path, entries: entries(v), i: 0, depth: 0, size: 1 });
  }
  return issues;
}
