/**
 * JSON schemas of the request bodies the agent accepts, and the types they guarantee. The
 * validators are generated from these schemas ahead of time (see request-validators.generated.ts)
 * so that no schema is compiled while the agent serves a request.
 */
const optionalString = { type: ['string', 'null'] } as const;

/** `POST /switchover`: `leader` is required, but the first of the API's ordered checks reports it, so the schema only checks types. */
const switchoverSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { leader: optionalString, candidate: optionalString, scheduled_at: optionalString, dry_run: { type: 'boolean' } },
} as const;

/** `POST /failover`: `scheduled_at` is accepted by the schema so step 2 can refuse it with its own message. */
const failoverSchema = switchoverSchema;

/** `POST /restart` (all optional). `timeout` and `schedule` formats are checked by the handler, which names them. */
const restartSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    restart_pending: { type: 'boolean' },
    role: { enum: ['primary', 'standby_leader', 'replica'] },
    db_version: { type: 'string', pattern: '^\\d+\\.\\d+(\\.\\d+)?$', description: 'a version X.Y or X.Y.Z' },
    timeout: {
      description: 'seconds as a positive number, or a duration string such as "30s" or "5min"',
      // One type check here; the handler checks the value, so a bad one is one problem, not one per branch.
      type: ['number', 'string'],
    },
    schedule: { type: 'string' },
  },
} as const;

/** `POST /reinitialize` (all optional); `from_leader` is accepted as an alias of `from-leader`. */
const reinitializeSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { force: { type: 'boolean' }, 'from-leader': { type: 'boolean' }, from_leader: { type: 'boolean' } },
} as const;

/** `POST /failsafe`: the leader's name and the failsafe members (name -> api_url). */
const failsafeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'members'],
  properties: {
    name: { type: 'string', minLength: 1 },
    members: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

/** `POST /reload`, `DELETE /switchover`, `DELETE /restart`: no fields (an empty body or `{}`). */
const noFieldsSchema = { type: 'object', additionalProperties: false, properties: {} } as const;

/** Body of `POST /switchover` and `POST /failover` after validation. */
export interface SwitchoverBody {
  readonly leader?: string | null;
  readonly candidate?: string | null;
  readonly scheduled_at?: string | null;
  readonly dry_run?: boolean;
}
/** Body of `POST /restart` after validation. */
export interface RestartBody {
  readonly restart_pending?: boolean;
  readonly role?: 'primary' | 'standby_leader' | 'replica';
  readonly db_version?: string;
  readonly timeout?: number | string;
  readonly schedule?: string;
}
/** Body of `POST /reinitialize` after validation. */
export interface ReinitializeBody {
  readonly force?: boolean;
  readonly 'from-leader'?: boolean;
  readonly from_leader?: boolean;
}
/** Body of `POST /failsafe` after validation. */
export interface FailsafeBody {
  readonly name: string;
  readonly members: Readonly<Record<string, string>>;
}

/** Every request body schema by the name its generated validator is exported under. */
export const REQUEST_SCHEMAS = {
  switchover: switchoverSchema,
  failover: failoverSchema,
  restart: restartSchema,
  reinitialize: reinitializeSchema,
  failsafe: failsafeSchema,
  noFields: noFieldsSchema,
} as const;
