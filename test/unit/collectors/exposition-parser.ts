/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for tests: it throws on
 * anything Prometheus would reject or that makes the output ambiguous: invalid names,
 * malformed labels or values, a second HELP/TYPE for a family, TYPE after a sample, samples of
 * one family split by another, duplicate series, histograms without ordered le buckets.
 */

/** One sample line. */
export interface ParsedSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** One metric family with its samples. */
export interface ParsedFamily {
  readonly name: string;
  help: string | null;
  type: string;
  readonly samples: ParsedSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** What Prometheus accepts (Go's strconv.ParseFloat): decimals, exponents, and Inf/Infinity/NaN in any case. */
const FLOAT = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function fail(line: number, msg: string, text: string): never {
  throw new Error(`line ${line}: ${msg}: ${JSON.stringify(text.slice(0, 200))}`);
}

function parseValue(text: string, line: number, raw: string): number {
  if (!FLOAT.test(text)) fail(line, `invalid sample value ${JSON.stringify(text)}`, raw);
  if (/nan$/i.test(text)) return NaN;
  if (/inf(inity)?$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  return Number(text);
}

/** Parses `{a="x",b="y"}` starting at `pos` (at the brace); returns labels and the index after `}`. */
function parseLabels(s: string, pos: number, line: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = pos + 1;
  for (;;) {
    if (s[i] === '}') return { labels, end: i + 1 };
    const m = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(s.slice(i));
    if (!m) fail(line, 'invalid label name', s);
    const name = m[0];
    if (name.startsWith('__')) fail(line, `reserved label name ${name}`, s);
    if (name in labels) fail(line, `label ${name} repeated`, s);
    i += name.length;
    if (s[i] !== '=' || s[i + 1] !== '"') fail(line, `expected =" after label ${name}`, s);
    i += 2;
    let value = '';
    for (;;) {
      const c = s[i];
      if (c === undefined) fail(line, 'unterminated label value', s);
      if (c === '"') break;
      if (c === '\n') fail(line, 'raw newline in label value', s);
      if (c === '\\') {
        const n = s[i + 1];
        if (n === '\\') value += '\\';
        else if (n === '"') value += '"';
        else if (n === 'n') value += '\n';
        else fail(line, `invalid escape \\${n ?? ''} in label value`, s);
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    labels[name] = value;
    i++;
    if (s[i] === ',') i++;
    else if (s[i] !== '}') fail(line, 'expected , or } after a label value', s);
  }
}

function familyOf(name: string, families: Map<string, ParsedFamily>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      const f = families.get(base);
      if (f && (f.type === 'histogram' || f.type === 'summary')) return base;
    }
  }
  return name;
}

function seriesKey(s: ParsedSample): string {
  return `${s.name}{${Object.keys(s.labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(s.labels[k])}`)
    .join(',')}}`;
}

function checkHistogram(f: ParsedFamily): void {
  const groups = new Map<string, ParsedSample[]>();
  for (const s of f.samples) {
    if (s.name === `${f.name}_bucket`) {
      if (!('le' in s.labels)) throw new Error(`${f.name}: bucket without le`);
      const { le: _le, ...rest } = s.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      groups.set(key, [...(groups.get(key) ?? []), s]);
    } else if (s.name !== `${f.name}_sum` && s.name !== `${f.name}_count`) {
      throw new Error(`${f.name}: unexpected sample ${s.name} in a histogram`);
    }
  }
  for (const buckets of groups.values()) {
    const les = buckets.map((b) => (b.labels['le'] === '+Inf' ? Infinity : Number(b.labels['le'])));
    if (les[les.length - 1] !== Infinity) throw new Error(`${f.name}: last bucket is not le="+Inf"`);
    for (let i = 1; i < les.length; i++) {
      if (!(les[i]! > les[i - 1]!)) throw new Error(`${f.name}: le values not increasing`);
      if (buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${f.name}: bucket counts decrease`);
    }
  }
}

/** Parses exposition text strictly; throws an Error naming the line on the first violation. */
export function parseExposition(text: string): Map<string, ParsedFamily> {
  const families = new Map<string, ParsedFamily>();
  const series = new Set<string>();
  const closed = new Set<string>();
  let current: string | null = null;
  const lines = text.split('\n');
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('text does not end with a newline');
  const touch = (name: string, line: number, raw: string): ParsedFamily => {
    if (current !== name) {
      if (closed.has(name)) fail(line, `family ${name} continues after another family started`, raw);
      if (current !== null) closed.add(current);
      current = name;
    }
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, help: null, type: 'untyped', samples: [] }));
    return f;
  };
  lines.forEach((raw, idx) => {
    const line = idx + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(raw);
      if (!m) return;
      const [, kind, name, rest] = m;
      if (!METRIC_NAME.test(name!)) fail(line, `invalid metric name ${name}`, raw);
      const f = touch(name!, line, raw);
      if (kind === 'HELP') {
        if (f.help !== null) fail(line, `second HELP for ${name}`, raw);
        if (!/^(?:[^\\]|\\[\\n])*$/.test(rest ?? '')) fail(line, 'invalid escape in HELP', raw);
        f.help = rest ?? '';
      } else {
        if ((f as { typed?: boolean }).typed) fail(line, `second TYPE for ${name}`, raw);
        if (f.samples.length > 0) fail(line, `TYPE for ${name} after its samples`, raw);
        if (!TYPES.has(rest ?? '')) fail(line, `unknown type ${rest}`, raw);
        f.type = rest!;
        (f as { typed?: boolean }).typed = true;
      }
      return;
    }
    const nm = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(raw);
    if (!nm) fail(line, 'invalid metric name', raw);
    const name = nm[0];
    let pos = name.length;
    let labels: Record<string, string> = {};
    if (raw[pos] === '{') ({ labels, end: pos } = parseLabels(raw, pos, line));
    if (raw[pos] !== ' ') fail(line, 'expected a space before the value', raw);
    const parts = raw.slice(pos + 1).trim().split(/\s+/);
    if (parts.length > 2) fail(line, 'trailing text after value and timestamp', raw);
    const value = parseValue(parts[0]!, line, raw);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) fail(line, 'invalid timestamp', raw);
    for (const k of Object.keys(labels)) if (!LABEL_NAME.test(k)) fail(line, `invalid label name ${k}`, raw);
    const f = touch(familyOf(name, families), line, raw);
    if (f.type === 'counter' && value < 0) fail(line, 'negative counter value', raw);
    const sample = { name, labels, value };
    const key = seriesKey(sample);
    if (series.has(key)) fail(line, `duplicate series ${key}`, raw);
    series.add(key);
    f.samples.push(sample);
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** Number of samples in parsed families. */
export function sampleCount(families: Map<string, ParsedFamily>): number {
  let n = 0;
  for (const f of families.values()) n += f.samples.length;
  return n;
}
