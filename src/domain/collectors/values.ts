/** Parses a PostgreSQL text value as a sample value: numbers, booleans, Infinity, NaN; null when not numeric. */
export function parseSampleValue(text: string): number | null {
  switch (text) {
    case 't':
    case 'true':
      return 1;
    case 'f':
    case 'false':
      return 0;
    case 'Infinity':
      return Infinity;
    case '-Infinity':
      return -Infinity;
    case 'NaN':
      return NaN;
  }
  if (text.length === 0 || text.trim().length !== text.length) return null;
  const n = Number(text);
  return Number.isNaN(n) ? null : n;
}

/** Parses a PostgreSQL array literal of numbers (`{1,2,3}`); null when it is not one. */
export function parseNumberArray(text: string): number[] | null {
  if (!text.startsWith('{') || !text.endsWith('}')) return null;
  const body = text.slice(1, -1).trim();
  if (body === '') return [];
  const out: number[] = [];
  for (const part of body.split(',')) {
    const n = parseSampleValue(part.trim().replace(/^"|"$/g, ''));
    if (n === null) return null;
    out.push(n);
  }
  return out;
}
