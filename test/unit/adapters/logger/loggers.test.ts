import { expect } from 'chai';
import { Writable } from 'node:stream';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { PinoLogger } from '../../../../src/adapters/logger/pino-logger.js';

function sink(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('PinoLogger', () => {
  it('writes one JSON object per line with level label, ISO time, message and fields', () => {
    const s = sink();
    const log = PinoLogger.create({ destination: s.stream, base: { scope: 'demo' } });
    log.info('promoted', { timeline: 2 });
    const [line] = s.lines();
    expect(line).to.include({ level: 'info', msg: 'promoted', timeline: 2, scope: 'demo' });
    expect(line!['time']).to.match(/^\d{4}-\d\d-\d\dT/);
  });

  it('children add their fields; the level filters', () => {
    const s = sink();
    const log = PinoLogger.create({ destination: s.stream, level: 'warn' });
    log.info('hidden');
    log.child({ name: 'node1' }).warn('lagging', { lag: 10 });
    const lines = s.lines();
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ level: 'warn', msg: 'lagging', name: 'node1', lag: 10 });
  });

  it('serializes errors and never throws on odd fields', () => {
    const s = sink();
    const log = PinoLogger.create({ destination: s.stream });
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    log.error('boom', { err: new Error('bad thing') });
    expect(() => log.error('cyclic', { cyclic })).to.not.throw();
    expect(s.lines()[0]!['err']).to.deep.include({ message: 'bad thing', type: 'Error' });
  });
});

describe('MemoryLogger', () => {
  it('collects lines with merged child fields into one shared array', () => {
    const log = new MemoryLogger();
    log.info('a', { x: 1 });
    const child = log.child({ name: 'n1' });
    child.warn('b', { y: 2 });
    child.debug('c');
    log.error('d');
    expect(log.lines).to.deep.equal([
      { level: 'info', msg: 'a', fields: { x: 1 } },
      { level: 'warn', msg: 'b', fields: { name: 'n1', y: 2 } },
      { level: 'debug', msg: 'c', fields: { name: 'n1' } },
      { level: 'error', msg: 'd', fields: {} },
    ]);
    expect(log.messages('warn')).to.deep.equal(['b']);
    expect(log.find('d')).to.have.length(1);
    log.clear();
    expect(log.lines).to.deep.equal([]);
  });
});
