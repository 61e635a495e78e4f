// How a configuration process hands what it read to the serving process: JSON, with what JSON
// cannot carry kept. The agent and the exporter both read their files in a short-lived process
// of their own (so the parsers' memory goes with it) and send the result over a pipe.

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * JSON with the non-finite numbers YAML allows (.inf, .nan) kept, as `{"$number": "Infinity"}`.
 * A key of the value that starts with `$` is sent as `$$...`: a name `$number` (a basic auth
 * user, a tag, a parameter) was read back as a number (NaN).
 */
export function encodeWire(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'number' && !Number.isFinite(v)) return { $number: String(v) };
    if (isPlainObject(v) && Object.keys(v).some((k) => k.startsWith('$'))) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.startsWith('$') ? `$${k}` : k, x]));
    return v;
  });
}

/** The inverse of encodeWire. */
export function decodeWire(text: string): unknown {
  return JSON.parse(text, (_k, v: unknown) => {
    if (!isPlainObject(v)) return v;
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === '$number') return Number(v['$number']);
    return keys.some((k) => k.startsWith('$$')) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k.startsWith('$$') ? k.slice(1) : k, x])) : v;
  });
}
