import type { ErrorObject } from 'ajv';
import { ValidationError } from '../../domain/errors.js';
import { ajvProblems } from './ajv-problems.js';
import type { FailsafeBody, ReinitializeBody, RestartBody, REQUEST_SCHEMAS, SwitchoverBody } from './request-schemas.js';
import * as generated from './request-validators.generated.js';

export type { FailsafeBody, ReinitializeBody, RestartBody, SwitchoverBody } from './request-schemas.js';

/** A validator as ajv generates it: true when the data is valid, else false with `errors` set. */
interface GeneratedValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

// Generated ahead of time: compiling even one schema at the first request took ~36 ms of
// event loop (a new ajv instance and its meta-schema), a stall in the middle of a switchover.
const validators = generated as unknown as Readonly<Record<keyof typeof REQUEST_SCHEMAS, GeneratedValidator>>;

interface BodyTypes {
  switchover: SwitchoverBody;
  failover: SwitchoverBody;
  restart: RestartBody;
  reinitialize: ReinitializeBody;
  failsafe: FailsafeBody;
  noFields: Record<string, never>;
}

/** Checks a parsed body against the endpoint's schema; throws ValidationError (400) naming every bad field. */
export function validateBody<K extends keyof BodyTypes>(kind: K, body: Record<string, unknown>): BodyTypes[K] {
  const validate = validators[kind];
  if (!validate(body)) throw new ValidationError(ajvProblems(validate.errors), 'invalid_body');
  return body as unknown as BodyTypes[K];
}
