import { Ajv } from 'ajv';
import { expect } from 'chai';
import { ajvProblems } from '../../../../src/adapters/http/ajv-problems.js';

/** The problems a schema finds in a value, as the HTTP layer and the local configuration word them. */
function problemsOf(schema: object, value: unknown): string[] {
  const validate = new Ajv({ allErrors: true, verbose: true }).compile(schema);
  validate(value);
  return ajvProblems(validate.errors).map((p) => `${p.path}: ${p.message}`);
}

describe('ajv problems: worded for people, never ajv\'s own "must NOT" sentences', () => {
  const schema = {
    type: 'object',
    properties: {
      hosts: { type: 'array', minItems: 1, maxItems: 2, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 4 } },
      port: { type: 'integer', minimum: 1, maximum: 65535 },
      wait: { type: 'number', exclusiveMinimum: 0 },
    },
  };

  it('bounds on lists, strings and numbers name the bound and what was found', () => {
    expect(problemsOf(schema, { hosts: [] })).to.deep.equal(['hosts: expected at least 1 item, got an empty list']);
    expect(problemsOf(schema, { hosts: ['a', 'b', 'c'] })).to.deep.equal(['hosts: expected at most 2 items, got 3']);
    expect(problemsOf(schema, { hosts: ['a', 'a'] })).to.deep.equal(['hosts: expected each item once, got the same value as items 1 and 2']);
    expect(problemsOf(schema, { hosts: [''] })).to.deep.equal(['hosts[0]: expected a non-empty string, got string ""']);
    expect(problemsOf(schema, { hosts: ['abcdef'] })).to.deep.equal(['hosts[0]: expected a string of at most 4 characters, got one of 6']);
    expect(problemsOf(schema, { port: 0, wait: 0 })).to.deep.equal(['port: expected a number >= 1, got number 0', 'wait: expected a number > 0, got number 0']);
    expect(problemsOf(schema, { port: 70000 })).to.deep.equal(['port: expected a number <= 65535, got number 70000']);
  });

  it('no problem says "must NOT"', () => {
    const all = [...problemsOf(schema, { hosts: [] }), ...problemsOf(schema, { hosts: ['a', 'a', ''] }), ...problemsOf(schema, { port: -1 })];
    for (const p of all) expect(p).not.to.match(/must NOT/);
  });
});
