import { escapeHelp } from './metric-naming.js';
import type { FamilyType, RenderedFamily } from './samples.js';

/** The `# HELP` and `# TYPE` lines of a family. */
export function familyHeader(name: string, help: string, type: FamilyType | 'untyped'): string {
  return `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`;
}

/** Renders families, one block each, in order. */
export function renderFamilies(families: readonly RenderedFamily[]): string {
  let out = '';
  for (const f of families) out += familyHeader(f.name, f.help, f.type) + f.lines;
  return out;
}

/**
 * Renders several outputs of the same collector (one per database) as one block per family:
 * the exposition format wants each family's samples together under a single header.
 */
export function mergeFamilies(outputs: readonly (readonly RenderedFamily[])[]): string {
  if (outputs.length === 1) return renderFamilies(outputs[0]!);
  const merged = new Map<string, { help: string; type: FamilyType; lines: string }>();
  for (const families of outputs) {
    for (const f of families) {
      const m = merged.get(f.name);
      if (m) m.lines += f.lines;
      else merged.set(f.name, { help: f.help, type: f.type, lines: f.lines });
    }
  }
  let out = '';
  for (const [name, m] of merged) out += familyHeader(name, m.help, m.type) + m.lines;
  return out;
}
