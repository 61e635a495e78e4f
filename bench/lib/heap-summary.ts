/** One object of a heap snapshot: its type, its name (a constructor, or a string's text) and its own bytes. */
interface SnapshotNode {
  readonly type: string;
  readonly name: string;
  readonly size: number;
}

/** The objects of a V8 heap snapshot (its JSON), one by one. */
function* snapshotNodes(json: string): Generator<SnapshotNode> {
  const snap = JSON.parse(json) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const types = snap.snapshot.meta.node_types[0];
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  for (let i = 0; i < snap.nodes.length; i += width) {
    yield { type: types[snap.nodes[i + iType]!]!, name: snap.strings[snap.nodes[i + iName]!]!, size: snap.nodes[i + iSize]! };
  }
}

/** Where a V8 heap snapshot's bytes are: by node type, by constructor or kind, and the largest strings (mostly module sources). */
export function heapSnapshotSummary(json: string, top = 12): string {
  const byType = new Map<string, number>();
  const byName = new Map<string, number>();
  const bigStrings: [number, string][] = [];
  let total = 0;
  for (const { type, name, size } of snapshotNodes(json)) {
    total += size;
    byType.set(type, (byType.get(type) ?? 0) + size);
    if (type === 'string') {
      if (size > 16_384) bigStrings.push([size, name.slice(0, 70).replace(/\s+/g, ' ')]);
      continue;
    }
    const key = `${type}: ${name.slice(0, 50)}`;
    byName.set(key, (byName.get(key) ?? 0) + size);
  }
  const mib = (b: number) => `${(b / 1048576).toFixed(2)} MiB`;
  const lines = [`live heap ${mib(total)}`, 'by type:'];
  for (const [k, v] of [...byType].sort((a, b) => b[1] - a[1]).slice(0, 8)) lines.push(`  ${mib(v).padStart(10)}  ${k}`);
  lines.push('by constructor / kind:');
  for (const [k, v] of [...byName].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${mib(v).padStart(10)}  ${k}`);
  lines.push('largest strings (module sources are kept as strings):');
  for (const [s, t] of bigStrings.sort((a, b) => b[0] - a[0]).slice(0, top)) lines.push(`  ${mib(s).padStart(10)}  ${t}`);
  return lines.join('\n');
}

/** Live objects of one kind in a heap snapshot: how many, and their own bytes. */
export interface HeapKind {
  readonly count: number;
  readonly bytes: number;
}

/** A heap snapshot's live objects by type and constructor (strings by type only): the figures two snapshots are compared by. */
export function heapKinds(json: string): Map<string, HeapKind> {
  const kinds = new Map<string, { count: number; bytes: number }>();
  for (const { type, name, size } of snapshotNodes(json)) {
    // A string's name is its text: grouped by type, or every distinct text would be a kind.
    const key = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? type : `${type}: ${name.slice(0, 50)}`;
    const k = kinds.get(key) ?? { count: 0, bytes: 0 };
    k.count++;
    k.bytes += size;
    kinds.set(key, k);
  }
  return kinds;
}

/** The kinds whose live bytes grew most from `before` to `after`, with the whole live heap of each. */
export function heapGrowth(before: ReadonlyMap<string, HeapKind>, after: ReadonlyMap<string, HeapKind>, top = 8): { totalBefore: number; totalAfter: number; grew: { kind: string; before: HeapKind; after: HeapKind }[] } {
  const sum = (m: ReadonlyMap<string, HeapKind>) => [...m.values()].reduce((a, k) => a + k.bytes, 0);
  const none: HeapKind = { count: 0, bytes: 0 };
  const grew = [...after]
    .map(([kind, a]) => ({ kind, before: before.get(kind) ?? none, after: a }))
    .filter((g) => g.after.bytes > g.before.bytes)
    .sort((x, y) => y.after.bytes - y.before.bytes - (x.after.bytes - x.before.bytes))
    .slice(0, top);
  return { totalBefore: sum(before), totalAfter: sum(after), grew };
}
