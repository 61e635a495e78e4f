import { expect } from 'chai';
import { JsonLinesLogger } from '../../../src/adapters/logger/json-lines-logger.js';

describe('exporter: JSON lines logger', () => {
  it('writes one JSON object per line at or above its level, with bindings, child fields and errors', () => {
    const lines: string[] = [];
    const log = new JsonLinesLogger('info', { component: 'x' }, (l) => lines.push(l));
    log.debug('hidden');
    log.info('hello', { n: 1 });
    log.child({ target: 't' }).warn('careful', { error: new Error('boom') });
    expect(lines).to.have.length(2);
    expect(lines.every((l) => l.endsWith('\n'))).to.equal(true);
    const [a, b] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(a).to.include({ level: 'info', component: 'x', msg: 'hello', n: 1 });
    expect(Number.isNaN(Date.parse(a!['time'] as string))).to.equal(false);
    expect(b).to.include({ level: 'warn', component: 'x', target: 't', msg: 'careful' });
    expect((b!['error'] as { message: string }).message).to.equal('boom');
    const silent: string[] = [];
    new JsonLinesLogger('silent', {}, (l) => silent.push(l)).error('nothing');
    expect(silent).to.deep.equal([]);
  });
});
