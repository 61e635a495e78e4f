/** Writes the request body validators generated from the request schemas (see request-validators-source.ts). */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REQUEST_VALIDATORS_FILE, requestValidatorsSource } from './lib/request-validators-source.js';

const file = join(dirname(fileURLToPath(import.meta.url)), '..', REQUEST_VALIDATORS_FILE);
writeFileSync(file, requestValidatorsSource());
console.log(`wrote ${REQUEST_VALIDATORS_FILE}`);
