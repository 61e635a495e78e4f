import { expect } from 'chai';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../../..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Module specifiers of every import/export-from/dynamic import in a source text. */
export function importsOf(source: string): string[] {
  const specs: string[] = [];
  const re = /(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const m of source.matchAll(re)) specs.push((m[1] ?? m[2] ?? m[3])!);
  return specs;
}

const IO_MODULES = /^(node:|fs$|fs\/|path$|os$|net$|http$|https$|http2$|child_process$|dgram$|dns$|tls$|crypto$|worker_threads$|cluster$|pg$|pg-|etcd3$|koa$|koa-|@koa\/|prom-client$|inversify$|@inversifyjs\/|reflect-metadata$|pino$|yaml$|commander$)/;
const OUTER_LAYERS = /(^|\/)(adapters|app)(\/|$)/;

/** Violations of the hexagonal rule in one file of domain or ports. */
export function violations(file: string, source: string, layer: 'domain' | 'ports'): string[] {
  const out: string[] = [];
  for (const spec of importsOf(source)) {
    if (IO_MODULES.test(spec)) out.push(`${file}: imports I/O or framework module '${spec}'`);
    else if (spec.startsWith('.') && OUTER_LAYERS.test(spec)) out.push(`${file}: imports outer layer '${spec}'`);
    else if (layer === 'domain' && spec.startsWith('.') && /(^|\/)ports(\/|$)/.test(spec)) out.push(`${file}: domain imports ports '${spec}'`);
  }
  if (layer === 'domain') {
    const code = source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    for (const t of ['setTimeout(', 'setInterval(', 'setImmediate(', 'Date.now(', 'new Date()', 'performance.now(', 'process.', '@injectable', '@inject(']) {
      if (code.includes(t)) out.push(`${file}: uses '${t}' (time, process and DI belong outside the domain)`);
    }
  }
  return out;
}

describe('architecture: the dependency rule', () => {
  for (const layer of ['domain', 'ports'] as const) {
    it(`src/${layer} imports nothing from adapters, app, I/O modules or Inversify`, () => {
      const found = tsFiles(join(root, 'src', layer)).flatMap((f) =>
        violations(relative(root, f), readFileSync(f, 'utf8'), layer),
      );
      expect(found, found.join('\n')).to.deep.equal([]);
    });
  }

  it('catches an I/O import added to a domain file', () => {
    expect(violations('x.ts', "import pg from 'pg';", 'domain')).to.have.length(1);
    expect(violations('x.ts', "import { readFile } from 'node:fs/promises';", 'domain')).to.have.length(1);
    expect(violations('x.ts', "import { Container } from 'inversify';", 'ports')).to.have.length(1);
    expect(violations('x.ts', "import { X } from '../../adapters/http/agent-api.js';", 'domain')).to.have.length(1);
    expect(violations('x.ts', "const m = await import('etcd3');", 'domain')).to.have.length(1);
  });

  it('catches wall-clock reads and timers in the domain, but not in ports', () => {
    expect(violations('x.ts', 'const t = Date.now();', 'domain')).to.have.length(1);
    expect(violations('x.ts', 'setTimeout(() => 1, 5);', 'domain')).to.have.length(1);
    expect(violations('x.ts', '// Date.now() is a port\nconst a = 1;', 'domain')).to.deep.equal([]);
    expect(violations('x.ts', "import type { Cluster } from '../domain/cluster/cluster.js';", 'ports')).to.deep.equal([]);
  });
});
