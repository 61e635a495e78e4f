/**
 * Summarises a V8 CPU profile (from `node --cpu-prof`): busy time by category (native calls
 * such as writev, Node internals, each package under node_modules, warden's own code), then
 * the top functions by self and by inclusive time. `--last S` keeps only the last S seconds
 * of the profile (e.g. the load run at its end), `--skip-end S` drops the final S seconds.
 * `--stretches N` lists the N longest stretches of samples without idle time between them:
 * how long the event loop was held at once, and by what (record with a fine sampling
 * interval, e.g. `--cpu-prof-interval 100`).
 *
 *   node --import tsx bench/lib/profile-summary.ts FILE.cpuprofile [--last 6] [--skip-end 0.3] [--top 25] [--stretches 10]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Where a frame's time is booked: a native function, Node itself, a package, or the project. */
function category(cf: CallFrame): string {
  if (cf.url === '') return `native:${cf.functionName || '(anonymous)'}`;
  if (cf.url.startsWith('node:')) return 'node internals';
  if (cf.url.includes('node_modules/')) {
    const parts = cf.url.split('node_modules/').pop()!.split('/');
    return `package ${parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  return 'project code';
}

function label(cf: CallFrame): string {
  const where = cf.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|dist)\//, '$1/');
  return `${cf.functionName || '(anonymous)'} ${where}:${cf.lineNumber + 1}`;
}

/** Busy time (ms) by category, self and inclusive, over the kept window. */
export function summarise(p: CpuProfile, lastUs: number, skipEndUs: number) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const from = lastUs > 0 ? p.endTime - lastUs : p.startTime;
  const to = p.endTime - skipEndUs;
  const cats = new Map<string, number>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  let t = p.startTime;
  let busy = 0;
  let idle = 0;
  p.samples.forEach((id, i) => {
    t += p.timeDeltas[i] ?? 0;
    const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
    if (t < from || t > to) return;
    const cf = byId.get(id)!.callFrame;
    if (cf.functionName === '(idle)') {
      idle += dt;
      return;
    }
    busy += dt;
    add(cats, category(cf), dt);
    add(self, label(cf), dt);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(byId.get(cur)!.callFrame);
      if (!seen.has(l)) add(inclusive, l, dt);
      seen.add(l);
    }
  });
  return { busy, idle, cats, self, inclusive };
}

/** One stretch of busy samples: when it began (ms into the profile), how long it lasted, and its heaviest frames (self time). */
export interface BusyStretch {
  readonly startMs: number;
  readonly ms: number;
  readonly top: readonly (readonly [string, number])[];
}

/**
 * The longest stretches of consecutive busy samples: the event loop held without a break
 * (JavaScript, native calls and garbage collection alike; a sample of "(idle)" ends one).
 */
export function busyStretches(p: CpuProfile, count: number, lastUs = 0, skipEndUs = 0): BusyStretch[] {
  const from = lastUs > 0 ? p.endTime - lastUs : p.startTime;
  const to = p.endTime - skipEndUs;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const out: BusyStretch[] = [];
  let cur: { start: number; ms: number; self: Map<string, number> } | null = null;
  let t = p.startTime;
  const close = () => {
    if (cur) out.push({ startMs: (cur.start - p.startTime) / 1000, ms: cur.ms, top: [...cur.self].sort((a, b) => b[1] - a[1]).slice(0, 4) });
    cur = null;
  };
  p.samples.forEach((id, i) => {
    t += p.timeDeltas[i] ?? 0;
    const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
    const cf = byId.get(id)!.callFrame;
    if (cf.functionName === '(idle)' || t < from || t > to) return close();
    cur ??= { start: t, ms: 0, self: new Map() };
    cur.ms += dt;
    cur.self.set(label(cf), (cur.self.get(label(cf)) ?? 0) + dt);
  });
  close();
  return out.sort((a, b) => b.ms - a.ms).slice(0, count);
}

const isMain = process.argv[1]?.endsWith('profile-summary.ts');
if (isMain) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { last: { type: 'string', default: '0' }, 'skip-end': { type: 'string', default: '0' }, top: { type: 'string', default: '25' }, stretches: { type: 'string', default: '0' } },
  });
  if (positionals.length !== 1) {
    console.error('usage: profile-summary.ts FILE.cpuprofile [--last S] [--skip-end S] [--top N] [--stretches N]');
    process.exit(2);
  }
  const p = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as CpuProfile;
  const s = summarise(p, Number(values.last) * 1e6, Number(values['skip-end']) * 1e6);
  const top = Number(values.top);
  const show = (title: string, m: Map<string, number>) => {
    console.log(`\n${title}`);
    for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${v.toFixed(1).padStart(9)} ms ${((100 * v) / s.busy).toFixed(1).padStart(5)}%  ${k}`);
  };
  console.log(`busy ${s.busy.toFixed(0)} ms, idle ${s.idle.toFixed(0)} ms`);
  show('by category', s.cats);
  show('self time', s.self);
  show('inclusive time', s.inclusive);
  const n = Number(values.stretches);
  if (n > 0) {
    console.log(`\nlongest busy stretches (the event loop held without a break)`);
    for (const b of busyStretches(p, n, Number(values.last) * 1e6, Number(values['skip-end']) * 1e6)) console.log(`${b.ms.toFixed(2).padStart(9)} ms at ${(b.startMs / 1000).toFixed(3)} s: ${b.top.map(([k, v]) => `${k} ${v.toFixed(2)}`).join('; ')}`);
  }
}
