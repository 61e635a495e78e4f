import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { editInEditor, Prompter, sleepUnlessAborted } from '../../../../src/app/ctl/terminal.js';

describe('ctl terminal', () => {
  it('Prompter: questions on the output stream, answers line by line from piped input, then \'\' after its end', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let written = '';
    output.on('data', (c: Buffer) => (written += c.toString()));
    const p = new Prompter(input, output);
    input.write('demo\ny\n');
    input.end();
    expect(await p.ask('name? ')).to.equal('demo');
    expect(await p.confirm('sure?')).to.equal(true);
    expect(await p.confirm('again?')).to.equal(false);
    p.close();
    expect(written).to.equal('name? \nsure? [y/N]: \nagain? [y/N]: \n');
  });

  it('Prompter: waits for a line typed later; only y/yes confirm', async () => {
    const input = new PassThrough();
    const p = new Prompter(input, new PassThrough());
    const pending = p.confirm('go?');
    setTimeout(() => input.write('no\n'), 5);
    expect(await pending).to.equal(false);
    const next = p.confirm('go?');
    input.write(' YES \n');
    expect(await next).to.equal(true);
    p.close();
  });

  it('editInEditor runs $EDITOR through the shell (arguments allowed) on a temp file and returns what was saved', () => {
    const out = editInEditor('ttl: 30\n', { EDITOR: "sed -i 's/ttl: 30/ttl: 45/'" });
    expect(out).to.equal('ttl: 45\n');
  });

  it('editInEditor: a failing editor is a clear error', () => {
    expect(() => editInEditor('x', { EDITOR: 'false' })).to.throw('editor "false" exited with 1; nothing changed');
  });

  it('sleepUnlessAborted ends early on abort', async () => {
    const c = new AbortController();
    const t0 = Date.now();
    const s = sleepUnlessAborted(5000, c.signal);
    c.abort();
    await s;
    expect(Date.now() - t0).to.be.lessThan(1000);
    await sleepUnlessAborted(5000, c.signal);
  });
});
