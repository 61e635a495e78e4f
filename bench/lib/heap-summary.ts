/** Where a V8 heap snapshot's bytes are: by node type, by constructor or kind, and the largest strings (mostly module sources). */
export function heapSnapshotSummary(json: string, top = 12): string {
  const snap = JSON.parse(json) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const types = snap.snapshot.meta.node_types[0];
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const byType = new Map<string, number>();
  const byName = new Map<string, number>();
  const bigStrings: [number, string][] = [];
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + iType]!]!;
    const size = snap.nodes[i + iSize]!;
    total += size;
    byType.set(type, (byType.get(type) ?? 0) + size);
    if (type === 'string') {
      if (size > 16_384) bigStrings.push([size, snap.strings[snap.nodes[i + iName]!]!.slice(0, 70).replace(/\s+/g, ' ')]);
      continue;
    }
    const key = `${type}: ${snap.strings[snap.nodes[i + iName]!]!.slice(0, 50)}`;
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
