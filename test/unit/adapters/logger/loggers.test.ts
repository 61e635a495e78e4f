import { expect } from 'chai';
import { Writable } from 'node:stream';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonLinesLogger } from '../../../../src/adapters/logger/json-lines-logger.js';
import { textLine } from '../../../../src/adapters/logger/text-format.js';

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

describe('JsonLinesLogger', () => {
  it('writes one JSON object per line with level label, ISO time, message and fields', () => {
    const s = sink();
    const log = JsonLinesLogger.create({ destination: s.stream, base: { scope: 'demo' } });
    log.info('promoted', { timeline: 2 });
    const [line] = s.lines();
    expect(line).to.include({ level: 'info', msg: 'promoted', timeline: 2, scope: 'demo' });
    expect(line!['time']).to.match(/^\d{4}-\d\d-\d\dT/);
    // The order pino writes: level, time, bindings, fields, msg last.
    expect(Object.keys(line!)).to.deep.equal(['level', 'time', 'scope', 'timeline', 'msg']);
  });

  it('children add their fields; the level filters', () => {
    const s = sink();
    const log = JsonLinesLogger.create({ destination: s.stream, level: 'warn' });
    log.info('hidden');
    log.child({ name: 'node1' }).warn('lagging', { lag: 10 });
    const lines = s.lines();
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ level: 'warn', msg: 'lagging', name: 'node1', lag: 10 });
  });

  it('serializes errors and never throws on odd fields', () => {
    const s = sink();
    const log = JsonLinesLogger.create({ destination: s.stream });
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    log.error('boom', { err: new Error('bad thing') });
    expect(() => log.error('cyclic', { cyclic })).to.not.throw();
    expect(s.lines()[0]!['err']).to.deep.include({ message: 'bad thing', type: 'Error' });
    expect(s.lines()[1]).to.deep.include({ msg: 'cyclic', cyclic: { self: '[Circular]' } });
  });
});

describe('JsonLinesLogger: formats, files, levels per component', () => {
  it('text: one human line per entry, component in brackets, other fields as key=value', () => {
    const chunks: string[] = [];
    const stream = new Writable({ write: (c, _e, cb) => (chunks.push(c.toString()), cb()) });
    const log = JsonLinesLogger.create({ destination: stream, format: 'text', base: { scope: 'demo', name: 'node1' } });
    log.child({ component: 'dcs' }).warn('etcd unreachable', { hosts: ['a:2379'], retry: 'in 1 s', n: 3 });
    log.info('two\nlines');
    const lines = chunks.join('').split('\n').filter(Boolean);
    expect(lines[0]).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARN  \[dcs\] etcd unreachable hosts=\["a:2379"\] retry="in 1 s" n=3$/);
    expect(lines[1]).to.match(/ INFO  two\\nlines$/);
    expect(textLine('not json')).to.equal('not json\n');
  });

  it('levels per component: a component can be more or less verbose than the rest', () => {
    const s = sink();
    const log = JsonLinesLogger.create({ destination: s.stream, level: 'info', levels: { dcs: 'debug', restapi: 'error' } });
    log.debug('root debug: hidden');
    log.child({ component: 'dcs' }).debug('dcs debug: shown');
    log.child({ component: 'restapi' }).warn('restapi warn: hidden');
    log.child({ component: 'restapi' }).error('restapi error: shown');
    log.child({ component: 'database' }).info('database info: shown (default level)');
    log.child({ node: 'x' }).debug('child debug: hidden');
    expect(s.lines().map((l) => l['msg'])).to.deep.equal(['dcs debug: shown', 'restapi error: shown', 'database info: shown (default level)']);
  });

  it('file: appends to the file (creating its directory), and reopens it after a rotation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-log-'));
    try {
      const file = join(dir, 'sub', 'warden.log');
      const log = JsonLinesLogger.create({ file, format: 'text' });
      log.info('first');
      renameSync(file, `${file}.1`);
      log.info('second');
      log.reopen();
      log.info('third (new file)');
      await log.flush();
      // A line still waiting to be written when the file is reopened goes to the new file: each line
      // lands once, in order across the two, and nothing logged after the reopen reaches the old one.
      const before = readFileSync(`${file}.1`, 'utf8');
      const after = readFileSync(file, 'utf8');
      expect(before).to.match(/^\S+ INFO  first\n/);
      expect(after).to.match(/INFO  third \(new file\)\n$/);
      expect((before + after).match(/INFO  (\S+)/g)).to.deep.equal(['INFO  first', 'INFO  second', 'INFO  third']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
