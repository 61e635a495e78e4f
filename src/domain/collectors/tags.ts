/** A collector tag, parsed. */
export type Tag =
  | { readonly kind: 'cluster' }
  | { readonly kind: 'primary' }
  | { readonly kind: 'replica' }
  | { readonly kind: 'extension'; readonly name: string }
  | { readonly kind: 'dbname'; readonly name: string }
  | { readonly kind: 'not'; readonly name: string }
  | { readonly kind: 'custom'; readonly name: string };

const WORD = /^[A-Za-z0-9_.-]+$/;
const PRIMARY = new Set(['primary', 'master', 'leader']);
const REPLICA = new Set(['replica', 'standby', 'slave']);

/** Parses one tag; a string result is the reason it is invalid. */
export function parseTag(text: string): Tag | string {
  const colon = text.indexOf(':');
  if (colon < 0) {
    if (!WORD.test(text)) return `invalid tag ${JSON.stringify(text)} (letters, digits, _ . - only)`;
    if (text === 'cluster') return { kind: 'cluster' };
    if (PRIMARY.has(text)) return { kind: 'primary' };
    if (REPLICA.has(text)) return { kind: 'replica' };
    return { kind: 'custom', name: text };
  }
  const prefix = text.slice(0, colon);
  const name = text.slice(colon + 1);
  if (prefix !== 'extension' && prefix !== 'dbname' && prefix !== 'not') {
    return `unknown tag prefix ${JSON.stringify(prefix)} (expected extension:, dbname: or not:)`;
  }
  if (!name || /\s|:/.test(name)) return `tag ${JSON.stringify(text)} needs a name after "${prefix}:"`;
  return { kind: prefix, name };
}

/** Parses valid tags and drops invalid ones (definitions are validated before they get here). */
export function parseTags(texts: readonly string[]): Tag[] {
  return texts.map(parseTag).filter((t): t is Tag => typeof t !== 'string');
}

/** The role a collector is restricted to by its tags, or null when it runs on both. */
export function roleRestriction(tags: readonly Tag[]): 'primary' | 'replica' | null {
  if (tags.some((t) => t.kind === 'primary')) return 'primary';
  if (tags.some((t) => t.kind === 'replica')) return 'replica';
  return null;
}

/** True when the collector runs once per server (on the database of the URL) rather than on every database. */
export function isClusterLevel(tags: readonly Tag[]): boolean {
  return tags.some((t) => t.kind === 'cluster');
}
