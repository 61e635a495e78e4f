import { spawn } from 'node:child_process';
import YAML from 'yaml';
import { fuzzCases, fuzzSeed, Random } from '../unit/adapters/http/fuzz-kit.js';

export { fuzzCases, fuzzSeed, Random };

/**
 * Shared parts of the configuration fuzz tests (the agent's node file, the exporter's collector,
 * web and targets files, wardenctl's file and command line): YAML texts made from a value in
 * several styles, mutations of a value at a path, mutations of the text and its bytes that a
 * YAML parser meets in the wild or in an attack (duplicate keys, aliases and alias bombs,
 * tags, deep nesting, garbage, invalid UTF-8, sizes), and a log of failing cases that prints
 * the seed and each case in a form that can be replayed.
 */

export type Path = readonly (string | number)[];
type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `a.b[0].c`, as the validators name paths. */
export function pathText(path: Path): string {
  return path.reduce<string>((acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : acc ? `${acc}.${k}` : k), '');
}

/** Deep copy of plain data. */
export function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Every path of a value (collections and leaves), the root excluded. */
export function allPaths(v: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [];
  if (Array.isArray(v)) v.forEach((x, i) => out.push([...prefix, i], ...allPaths(x, [...prefix, i])));
  else if (isObj(v)) for (const [k, x] of Object.entries(v)) out.push([...prefix, k], ...allPaths(x, [...prefix, k]));
  return out;
}

export function getAt(v: unknown, path: Path): unknown {
  let cur = v;
  for (const k of path) cur = (cur as Record<string | number, unknown> | undefined)?.[k];
  return cur;
}

/** Sets (own property, even `__proto__`) or, with `undefined`, deletes the value at `path`, creating mappings on the way. */
export function setAt(root: Obj, path: Path, value: unknown): void {
  let cur: Record<string | number, unknown> = root;
  for (const k of path.slice(0, -1)) {
    if (typeof cur[k] !== 'object' || cur[k] === null) Object.defineProperty(cur, k, { value: {}, writable: true, enumerable: true, configurable: true });
    cur = cur[k] as Record<string | number, unknown>;
  }
  const last = path[path.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(cur) && typeof last === 'number') cur.splice(last, 1);
    else delete cur[last];
  } else Object.defineProperty(cur, last, { value, writable: true, enumerable: true, configurable: true });
}

/** A value as YAML text in a style picked at random: block, flow (JSON), or block with comments and odd spacing. */
export function yamlText(rng: Random, value: unknown): string {
  switch (rng.weighted({ block: 6, json: 2, flowLines: 1, commented: 2 })) {
    case 'json':
      return `${JSON.stringify(value, null, rng.chance(0.5) ? 2 : 0)}\n`;
    case 'flowLines':
      // Top-level block mapping, sections in flow style.
      return isObj(value) ? Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join('\n') + '\n' : YAML.stringify(value);
    case 'commented':
      return `# generated\n${YAML.stringify(value, { indent: rng.pick([2, 4]) })
        .split('\n')
        // Only after a key that opens a block: elsewhere a comment may end a scalar that goes on below.
        .map((l) => (rng.chance(0.3) && /^\s*[\w.-]+:$/.test(l) ? `${l}   # note` : l))
        .join('\n')}`;
    default:
      return YAML.stringify(value, { indent: rng.pick([2, 3, 4]), lineWidth: 0 });
  }
}

/** Keys that break naive code: prototype names, separators, unicode, empty, very long, numbers, YAML words. */
export const NASTY_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'a.b', 'a b', ' ', 'ключ', '鍵', 'é', '\u0000', 'x\ny', '0', '-1', 'true', 'null', '<<', '*', '&', '!', '%', '@x', '`x`', "'q'", '"dq"', 'k'.repeat(300), 'K'.repeat(2000), '[a]', '{a: 1}', '#c', 'colour'];

/** Scalars of every kind and size (JS values; serialized by the YAML writer). */
export function oddScalar(rng: Random): unknown {
  return rng.pick<() => unknown>([
    () => rng.pick(['', ' ', '\t', '\n', 'x', 'yes', 'no', 'on', 'off', 'null', '~', 'NaN', '.nan', '.inf', '1e99', '0x10', '0o17', '1_000', '-0', '+1', '10 MB', '-1s', '1e99s', '30s', '1h30m', '100ms', '5min', '1MB', '1 GB', '-1', '99999999999999999999']),
    () => rng.pick([0, -0, 1, -1, 1.5, -1.5, 1e99, -1e99, 1e-300, 2 ** 31, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, Infinity, -Infinity, NaN]),
    () => rng.pick([true, false, null]),
    () => rng.pick(['\u0000', '\u0007', '\u001b[31m', '\u202e', '\ud83d\ude00', 'é', '\ufeff', 'a\r\nb', 'line\nbreak', '"', "'", '\\', '%s%n', '${HOME}', '$(reboot)', '`id`', '{{x}}', 'ＡＢＣ']),
    () => 'x'.repeat(rng.pick([100, 1000, 100_000])),
    () => rng.pick(['127.0.0.1:0', '127.0.0.1:65536', '127.0.0.1:99999', '[::1]:8008', '[::1:8008', ':8008', '*:8008', '0.0.0.0:8008', 'host:port', 'a:b:c', 'http://x:1', '/tmp/x', '../../etc/passwd', 'C:\\x']),
  ])();
}

/** A value of the other kind: a collection where a scalar was, a scalar where a collection was. */
export function otherKind(rng: Random, was: unknown): unknown {
  if (Array.isArray(was) || isObj(was)) return rng.pick<unknown>([rng.int(-5, 5), rng.chance(0.5), 'text', 1.5]);
  return rng.pick<unknown>([[], [was], { x: was }, {}, [[1]], { a: { b: 1 } }]);
}

/** A YAML source snippet for a scalar position: tags (core and not), aliases, odd numbers. */
export function taggedScalarText(rng: Random): { text: string; core: boolean } {
  const core = rng.chance(0.4);
  const text = core
    ? rng.pick(['!!str 1', '!!int 7', '!!float 1.5', '!!bool true', '!!null ~', '!!str "x"', '.inf', '-.inf', '.nan', '0x1F', '0o17', '+12', '1e400'])
    : rng.pick(['!!binary aGVsbG8=', '!!js/function "function () { return 1 }"', '!!js/undefined ""', '!!python/object:os.system "id"', '!!timestamp 2001-12-14', '!!set {a, b}', '!!omap [a: 1]', '!!pairs [a: 1]', '!custom x', '!<tag:example.com,2000:x> y', '!!float x', '!!int 1.5', '!!bool maybe', '!!map x']);
  return { text, core };
}

/** Billion laughs: `levels` anchors, each a list of `width` aliases of the previous one. */
export function aliasBomb(levels: number, width: number, key = 'lol'): string {
  const lines = [`${key}0: &${key}0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]`];
  for (let i = 1; i < levels; i++) lines.push(`${key}${i}: &${key}${i} [${Array.from({ length: width }, () => `*${key}${i - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\n`;
}

/** A mapping at `key` nested `depth` deep, in flow or block style. */
export function deepNesting(rng: Random, key: string, depth: number): string {
  if (rng.chance(0.5)) return `${key}: ${'['.repeat(depth)}1${']'.repeat(depth)}\n`;
  if (rng.chance(0.5)) return `${key}: ${'{a: '.repeat(depth)}1${'}'.repeat(depth)}\n`;
  const lines = [`${key}:`];
  for (let i = 1; i <= Math.min(depth, 3000); i++) lines.push(`${' '.repeat(i)}a${i}:`);
  return `${lines.join('\n')} 1\n`;
}

/** Random bytes: mostly printable ASCII and YAML punctuation, some high and control bytes. */
export function garbage(rng: Random, n: number): Buffer {
  const b = Buffer.alloc(n);
  const punct = ':-?[]{}&*!|>\'"%@`#,\n ';
  for (let i = 0; i < n; i++) {
    const r = rng.next();
    b[i] = r < 0.5 ? 0x20 + rng.int(0, 94) : r < 0.8 ? punct.charCodeAt(rng.int(0, punct.length - 1)) : rng.int(0, 255);
  }
  return b;
}

/** What a text-level mutation did, and whether the result is surely refused. */
export interface BytesMutation {
  readonly bytes: Buffer;
  readonly note: string;
  /** The result cannot be a valid configuration (whatever the schema says). */
  readonly invalid: boolean;
  /** The text still says what it said (the same values): what was refused before still is, at the same paths. */
  readonly keepsValues?: boolean;
}

/**
 * Mutations of a YAML text that stay at the YAML level: `topKeys` are the top-level keys
 * the text has (a duplicate is made of one), `freeKey` a top-level key under which anything
 * is a problem (`alias bomb`, nesting), `scalarLine` finds lines ending in a scalar value.
 */
export function mutateText(rng: Random, text: string | Buffer, topKeys: readonly string[], freeKey: string): BytesMutation {
  // Bytes that are no UTF-8 stay as they are: a change through a string would make them valid (U+FFFD).
  if (typeof text === 'string') return mutateUtf8(rng, text, topKeys, freeKey);
  let decoded: string;
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(text);
  } catch {
    return { bytes: text, note: 'unchanged (not UTF-8 already)', invalid: true, keepsValues: true };
  }
  return mutateUtf8(rng, decoded, topKeys, freeKey);
}

function mutateUtf8(rng: Random, text: string, topKeys: readonly string[], freeKey: string): BytesMutation {
  const lines = text.split('\n');
  const scalarLines = lines.map((l, i) => [l, i] as const).filter(([l]) => /^\s*[A-Za-z_][\w.-]*: [^\s{[&*!|>#][^#]*$/.test(l));
  const buf = (s: string) => Buffer.from(s, 'utf8');
  switch (
    rng.weighted({
      duplicateKey: 6,
      aliasValid: 3,
      aliasMissing: 3,
      aliasCycle: 3,
      aliasBomb: 4,
      aliasWide: 2,
      tag: 6,
      deep: 4,
      multiDoc: 2,
      topScalar: 3,
      empty: 2,
      commentsOnly: 1,
      garbage: 3,
      garbageTail: 2,
      invalidUtf8: 4,
      bom: 1,
      crlf: 2,
      tabs: 2,
      nul: 2,
      truncate: 4,
      byteFlip: 4,
      huge: 1,
      manyKeys: 2,
      longLine: 2,
      collectionKey: 2,
      emptyKey: 1,
      directive: 1,
    })
  ) {
    case 'duplicateKey': {
      const k = rng.pick(topKeys);
      // Invalid when the key is there (a cut may have taken it away), or after a document in flow style (JSON), which takes no block lines after it.
      const there = new RegExp(`^["']?${k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["']?\\s*:`, 'm').test(text) || /^\s*(#.*\n\s*)*[[{]/.test(text);
      return { bytes: buf(`${text}${text.endsWith('\n') ? '' : '\n'}${k}: ${rng.pick(['again', '1', '{}', '[]'])}\n`), note: `duplicate top-level key ${k}`, invalid: there };
    }
    case 'aliasValid': {
      if (!scalarLines.length) return { bytes: buf(text), note: 'unchanged (no scalar line for an anchor)', invalid: false };
      const [line, i] = rng.pick(scalarLines);
      const [key, ...rest] = line.split(': ');
      const copy = [...lines];
      copy[i] = `${key}: &anchor1 ${rest.join(': ')}`;
      return { bytes: buf(copy.join('\n')), note: `anchor on line ${i + 1} (no alias)`, invalid: false, keepsValues: true };
    }
    case 'aliasMissing':
      return { bytes: buf(`${text}\n${freeKey}: *nowhere\n`), note: 'alias without an anchor', invalid: true };
    case 'aliasCycle':
      return { bytes: buf(`${text}\n${freeKey}: &loop [1, *loop]\n`), note: 'alias inside its own anchor', invalid: true };
    case 'aliasBomb': {
      const levels = rng.int(6, 12);
      const width = rng.int(6, 10);
      return { bytes: buf(rng.chance(0.5) ? `${text}\n${freeKey}:\n${aliasBomb(levels, width).replace(/^/gm, '  ')}` : `${aliasBomb(levels, width, 'top')}${text}`), note: `billion laughs ${levels}x${width}`, invalid: true };
    }
    case 'aliasWide': {
      // One big anchored list used many times: no alias inside it, so yaml's own bound does not see it.
      const n = rng.int(2_000, 6_000);
      const uses = rng.int(40, 99);
      return { bytes: buf(`${text}\n${freeKey}:\n  big: &big [${Array.from({ length: n }, (_, i) => i % 10).join(',')}]\n  uses: [${Array.from({ length: uses }, () => '*big').join(', ')}]\n`), note: `a list of ${n} used ${uses} times`, invalid: true };
    }
    case 'tag': {
      if (!scalarLines.length) return { bytes: buf(`${text}\n${freeKey}: !!binary aGk=\n`), note: 'binary tag', invalid: true };
      const [line, i] = rng.pick(scalarLines);
      const [key] = line.split(': ');
      const t = taggedScalarText(rng);
      const copy = [...lines];
      copy[i] = `${key}: ${t.text}`;
      return { bytes: buf(copy.join('\n')), note: `tag on line ${i + 1}: ${t.text}`, invalid: !t.core };
    }
    case 'deep': {
      const depth = rng.pick([70, 200, 1000, 5000, 20_000]);
      return { bytes: buf(`${text}\n${deepNesting(rng, freeKey, depth)}`), note: `nesting ${depth} deep`, invalid: true };
    }
    case 'multiDoc':
      return { bytes: buf(`${text}\n---\n${text}`), note: 'two documents', invalid: true };
    case 'topScalar':
      return { bytes: buf(rng.pick(['42\n', '"text"\n', '- a\n- b\n', '[1, 2]\n', 'true\n', '~\n', '.inf\n', '|\n  block\n'])), note: 'top level is not a mapping', invalid: true };
    case 'empty':
      return { bytes: buf(rng.pick(['', '\n', '   \n\n', '---\n', '...\n'])), note: 'empty', invalid: true };
    case 'commentsOnly':
      return { bytes: buf('# nothing here\n# at all\n'), note: 'comments only', invalid: true };
    case 'garbage':
      return { bytes: garbage(rng, rng.int(1, 4000)), note: 'random bytes', invalid: true };
    case 'garbageTail':
      return { bytes: Buffer.concat([buf(text), garbage(rng, rng.int(1, 200))]), note: 'random bytes after the text', invalid: false };
    case 'invalidUtf8': {
      const b = buf(text);
      const at = rng.int(0, b.length);
      const bad = Buffer.from(rng.pick([[0xff], [0xfe, 0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf], [0x80]]));
      return { bytes: Buffer.concat([b.subarray(0, at), bad, b.subarray(at)]), note: `invalid UTF-8 at byte ${at}`, invalid: true };
    }
    case 'bom':
      return { bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), buf(text)]), note: 'byte order mark', invalid: false, keepsValues: true };
    case 'crlf':
      return { bytes: buf(text.replace(/\n/g, '\r\n')), note: 'CRLF line ends', invalid: false, keepsValues: true };
    case 'tabs':
      return { bytes: buf(text.replace(/^( +)/gm, (s) => '\t'.repeat(Math.ceil(s.length / 2)))), note: 'tabs for indentation', invalid: false };
    case 'nul': {
      const at = rng.int(0, text.length);
      return { bytes: buf(`${text.slice(0, at)}\u0000${text.slice(at)}`), note: `NUL at ${at}`, invalid: false };
    }
    case 'truncate': {
      const at = rng.int(0, text.length);
      return { bytes: buf(text.slice(0, at)), note: `cut at ${at} of ${text.length}`, invalid: false };
    }
    case 'byteFlip': {
      const b = Buffer.from(buf(text));
      const n = rng.int(1, 5);
      for (let k = 0; k < n && b.length; k++) b[rng.int(0, b.length - 1)] = rng.pick([0x3a, 0x2d, 0x5b, 0x7b, 0x26, 0x2a, 0x21, 0x22, 0x27, 0x20, 0x0a, 0x23, 0x7c, 0x3e, 0x25, 0x40]);
      return { bytes: b, note: `${n} byte(s) replaced by YAML punctuation`, invalid: false };
    }
    case 'huge': {
      const size = rng.pick([2, 10]) * 1024 * 1024;
      return { bytes: buf(`${text}\n${freeKey}: "${'a'.repeat(size)}"\n`), note: `a file of ${size >> 20} MiB`, invalid: true };
    }
    case 'manyKeys': {
      const n = rng.pick([2_000, 5_000, 15_000]);
      const body = Array.from({ length: n }, (_, i) => `  k${i}: ${i}`).join('\n');
      return { bytes: buf(`${text}\n${freeKey}:\n${body}\n`), note: `${n} keys in one mapping`, invalid: false };
    }
    case 'longLine': {
      const n = rng.pick([1025, 5000, 200_000]);
      return { bytes: buf(`${text}\n${'k'.repeat(n)}: 1\n`), note: `a key of ${n} characters`, invalid: true };
    }
    case 'collectionKey':
      return { bytes: buf(`${text}\n${rng.pick(['? [a, b]\n: 1', '? {a: 1}\n: 2', '[x]: 3', '{y: 1}: 4'])}\n`), note: 'a list or mapping as a key', invalid: true };
    case 'emptyKey':
      return { bytes: buf(`${text}\n${rng.pick(['"": 1', '~: 1', '? \n: 1'])}\n`), note: 'an empty key', invalid: true };
    default:
      return { bytes: buf(`${rng.pick(['%YAML 1.1', '%YAML 1.2', '%YAML 2.0', '%TAG ! tag:example.com,2000:', '%FOO bar'])}\n---\n${text}`), note: 'a directive', invalid: false };
  }
}

/** A case's bytes for a report: a JS string literal of the first 1500 characters. */
export function describeBytes(bytes: Buffer): string {
  const LIMIT = 1500;
  const shown = JSON.stringify(bytes.subarray(0, LIMIT).toString('latin1'));
  return bytes.length > LIMIT ? `${shown} ... (${bytes.length} bytes in all)` : shown;
}

export { CaseLog } from '../unit/adapters/http/fuzz-kit.js';

/** Lines of a stack trace, or Node's words for what escaped. */
export const STACK_TRACE = /^\s+at .+[(:]\d+|Unhandled|uncaughtException|unhandledRejection|node:internal|Error: .*\n\s+at /m;

/** A problem message that leaks an object instead of saying what is wrong. */
export const LEAKED_OBJECT = /\[object \w+\]|\[native code\]|function \w*\(\)|Symbol\(|(?<![\w/])undefined\b/;

/** The parts of a JSON schema the generators read. */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly additionalProperties?: JsonSchema | boolean;
  readonly items?: JsonSchema;
  readonly oneOf?: readonly JsonSchema[];
}

/** The schema of the value at `path` (own keys only), undefined where the schema says nothing. */
export function schemaAt(schema: JsonSchema, path: Path): JsonSchema | undefined {
  let node: JsonSchema | undefined = schema;
  for (const k of path) {
    if (!node) return undefined;
    if (typeof k === 'number') node = node.items;
    else node = node.properties && Object.hasOwn(node.properties, k) ? node.properties[k] : isObj(node.additionalProperties) ? (node.additionalProperties as JsonSchema) : undefined;
  }
  return node;
}

/** The JSON types a schema node allows (`enum` for enumerations), empty when it says nothing. */
export function schemaTypes(s: JsonSchema | undefined): string[] {
  if (s === undefined) return [];
  if (s.type !== undefined) return Array.isArray(s.type) ? [...s.type] : [s.type as string];
  if (s.enum) return ['enum'];
  return s.oneOf ? s.oneOf.flatMap(schemaTypes) : [];
}

/** Whether `value` at a node of `types` is surely refused: a collection where only scalars go, a number or boolean where only collections go. */
export function surelyWrongKind(types: readonly string[], value: unknown): boolean {
  if (types.length === 0) return false;
  const collection = Array.isArray(value) || isObj(value);
  const scalarOnly = !types.some((t) => t === 'object' || t === 'array');
  const collectionOnly = types.every((t) => t === 'object' || t === 'array');
  return (scalarOnly && collection) || (collectionOnly && !collection && typeof value !== 'string' && value !== null);
}

/** Whether a problem at `problemPath` names `path` (itself, a part of it, or what is inside it). */
export function namesPath(problemPath: string, path: string): boolean {
  if (path === '') return true;
  return problemPath === path || problemPath.startsWith(`${path}.`) || problemPath.startsWith(`${path}[`) || path.startsWith(`${problemPath}.`) || path.startsWith(`${problemPath}[`);
}

/**
 * Runs `fn`, measuring the CPU time this process spent (what a case costs, whatever else the
 * machine runs meanwhile: the unit tests run in parallel) and the time that passed (a case
 * waiting on something that never comes).
 */
export async function measured<T>(fn: () => T | Promise<T>): Promise<{ readonly value?: T; readonly error?: unknown; readonly threw: boolean; readonly cpuMs: number; readonly wallMs: number }> {
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  let value: T | undefined;
  let error: unknown;
  let threw = false;
  try {
    value = await fn();
  } catch (e) {
    error = e;
    threw = true;
  }
  const used = process.cpuUsage(cpu);
  return { ...(threw ? { error } : { value: value as T }), threw, cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - t0 };
}

/** What a command said and how it ended. */
export interface ProcessRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
  /** It had to be killed after `timeoutMs`. */
  readonly timedOut: boolean;
}

/** Runs `node <args>` with `env` (and nothing on stdin), killing it (its own PID) after `timeoutMs`. */
export function runNode(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ProcessRun> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0, timedOut });
    });
  });
}

/** Runs `jobs` at most `width` at a time, in order of start; resolves with their results in order. */
export async function inPool<T>(jobs: readonly (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker));
  return results;
}
