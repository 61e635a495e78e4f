/** `/a/b/0` (a JSON pointer, as ajv reports `instancePath`) to `a.b[0]`, under `root` when given. */
export function pointerToPath(pointer: string, root = ''): string {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), root);
}

/** A short JSON rendering of a found value for "expected X, got Y" messages. */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  // JSON has no Infinity: 1e400 parses to it, and JSON.stringify would call it null.
  if (typeof v === 'number' && !Number.isFinite(v)) return `${String(v)} (a number out of range)`;
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
