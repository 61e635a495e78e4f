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

/** The inner layers, innermost first; each may import only the layers before it (and itself). */
const LAYERS = ['domain', 'ports', 'usecases', 'adapters', 'app'] as const;
type Layer = (typeof LAYERS)[number];

/** The layer a relative import from a file of `layer` lands in, or null when it stays inside (a sibling file) or leaves src. */
function targetLayer(spec: string): Layer | null {
  const m = /(?:^|\/)(domain|ports|usecases|adapters|app)(?:\/|$)/.exec(spec);
  return m ? (m[1] as Layer) : null;
}

/** Violations of the hexagonal rule in one file of an inner layer: imports point inward only. */
export function violations(file: string, source: string, layer: Exclude<Layer, 'app'>): string[] {
  const out: string[] = [];
  const allowed = LAYERS.slice(0, LAYERS.indexOf(layer) + 1);
  for (const spec of importsOf(source)) {
    if (layer !== 'adapters' && IO_MODULES.test(spec)) out.push(`${file}: imports I/O or framework module '${spec}'`);
    else if (spec.startsWith('.')) {
      const target = targetLayer(spec);
      if (target !== null && !allowed.includes(target)) out.push(`${file}: ${layer} imports ${target} '${spec}'`);
    }
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
  for (const layer of ['domain', 'ports', 'usecases', 'adapters'] as const) {
    it(`src/${layer} imports only inner layers${layer === 'adapters' ? '' : ', and no I/O modules or Inversify'}`, () => {
      const found = tsFiles(join(root, 'src', layer)).flatMap((f) => violations(relative(root, f), readFileSync(f, 'utf8'), layer));
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

  it('catches an import that points outward from use cases or adapters', () => {
    expect(violations('x.ts', "import { X } from '../adapters/http/agent-api.js';", 'usecases')).to.have.length(1);
    expect(violations('x.ts', "import { X } from '../../app/agent/ha-loop.js';", 'adapters')).to.have.length(1);
    expect(violations('x.ts', "import { X } from '../../usecases/switchover.js';", 'adapters')).to.deep.equal([]);
    expect(violations('x.ts', "import { X } from '../usecases/switchover.js';", 'ports')).to.have.length(1);
    expect(violations('x.ts', "import pg from 'pg';", 'usecases')).to.have.length(1);
  });

  it('catches wall-clock reads and timers in the domain, but not in ports', () => {
    expect(violations('x.ts', 'const t = Date.now();', 'domain')).to.have.length(1);
    expect(violations('x.ts', 'setTimeout(() => 1, 5);', 'domain')).to.have.length(1);
    expect(violations('x.ts', '// Date.now() is a port\nconst a = 1;', 'domain')).to.deep.equal([]);
    expect(violations('x.ts', "import type { Cluster } from '../domain/cluster/cluster.js';", 'ports')).to.deep.equal([]);
  });
});
