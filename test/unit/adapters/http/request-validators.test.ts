import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REQUEST_VALIDATORS_FILE, requestValidatorsSource } from '../../../../scripts/lib/request-validators-source.js';
import { REQUEST_SCHEMAS } from '../../../../src/adapters/http/request-schemas.js';
import * as generated from '../../../../src/adapters/http/request-validators.generated.js';
import { validateBody } from '../../../../src/adapters/http/schemas.js';
import { ValidationError } from '../../../../src/domain/errors.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../../../..');

describe('request body validators (generated ahead of time)', () => {
  it('match the request schemas: `npm run generate:validators` was run after the last schema change', () => {
    expect(readFileSync(join(repoRoot, REQUEST_VALIDATORS_FILE), 'utf8')).to.equal(requestValidatorsSource());
  });

  it('exist for every request schema', () => {
    expect(Object.keys(generated).sort()).to.deep.equal(Object.keys(REQUEST_SCHEMAS).sort());
  });

  it('name every bad field, as a validator compiled at run time did', () => {
    let error: unknown;
    try {
      validateBody('failsafe', { name: '', members: { a: 1 }, extra: true });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(ValidationError);
    expect((error as ValidationError).problems).to.deep.equal([
      { path: 'extra', message: 'unknown field' },
      { path: 'name', message: 'expected a non-empty string, got string ""' },
      { path: 'members.a', message: 'expected string, got number 1' },
    ]);
    expect(validateBody('failover', { leader: 'a', candidate: null })).to.deep.equal({ leader: 'a', candidate: null });
    expect(() => validateBody('restart', { db_version: '15', timeout: -1 })).to.throw(ValidationError);
  });
});
