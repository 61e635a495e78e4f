import { mergePatch, validateConfigOrThrow, type RawConfig } from '../../domain/cluster/config/config.js';
import { ValidationError } from '../../domain/errors.js';
import type { AgentApiDeps } from './api-deps.js';
import { readJsonObject } from './body.js';
import { HttpError } from './errors.js';
import { setJsonBody } from './json-body.js';
import type { Route } from './routes.js';

/** The stored dynamic configuration and its revision (null: nothing stored yet). */
async function readStoredConfig(deps: AgentApiDeps): Promise<{ value: RawConfig; revision: string | null }> {
  const config = (await deps.store.read()).config;
  return config ? { value: config.value, revision: config.revision } : { value: {}, revision: null };
}

function invalidConfig(err: unknown): never {
  if (err instanceof ValidationError) throw new ValidationError(err.problems, 'invalid_config');
  throw err;
}

/** `GET /config`, `PATCH /config` (merge, validate, compare-and-set), `PUT /config` (validate, replace) (spec §2). */
export function configRoutes(deps: AgentApiDeps): Route[] {
  const { store, control } = deps;
  return [
    {
      path: '/config',
      methods: {
        GET: async (ctx) => {
          setJsonBody(ctx, (await readStoredConfig(deps)).value);
        },
        PATCH: async (ctx) => {
          const patch = await readJsonObject(ctx);
          const stored = await readStoredConfig(deps);
          const merged = mergePatch(stored.value, patch);
          try {
            validateConfigOrThrow(merged);
          } catch (err) {
            invalidConfig(err);
          }
          const written = await store.writeConfig(merged, stored.revision);
          if (!written) {
            throw new HttpError(409, 'config_conflict', 'the configuration was changed by someone else meanwhile; read it again and retry');
          }
          control.wake();
          setJsonBody(ctx, merged);
        },
        PUT: async (ctx) => {
          const body = await readJsonObject(ctx);
          try {
            validateConfigOrThrow(body);
          } catch (err) {
            invalidConfig(err);
          }
          await store.writeConfig(body, undefined);
          control.wake();
          setJsonBody(ctx, body);
        },
      },
    },
  ];
}
