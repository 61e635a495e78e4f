import { mergePatch, validateConfigOrThrow, type RawConfig } from '../../domain/cluster/config/config.js';
import { DcsKey } from '../../domain/cluster/model/dcs-keys.js';
import { ValidationError } from '../../domain/errors.js';
import type { AgentApiDeps } from './api-deps.js';
import { readJsonObject } from './body.js';
import { HttpError } from './errors.js';
import { setJsonBody } from './json-body.js';
import type { Route } from './routes.js';

/** The stored dynamic configuration and its revision (`'0'`: no key yet). */
async function readStoredConfig(deps: AgentApiDeps): Promise<{ value: RawConfig; revision: string }> {
  const raw = await deps.dcs.readAll();
  const entry = raw.get(DcsKey.config);
  if (!entry) return { value: {}, revision: '0' };
  let value: unknown;
  try {
    value = JSON.parse(entry.value);
  } catch {
    value = null;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    // Unreadable by hand-editing: PATCH merges onto nothing, PUT replaces it.
    deps.logger.warn('the DCS config key is not a JSON object; treating it as empty', { revision: entry.revision });
    return { value: {}, revision: entry.revision };
  }
  return { value: value as RawConfig, revision: entry.revision };
}

function invalidConfig(err: unknown): never {
  if (err instanceof ValidationError) throw new ValidationError(err.problems, 'invalid_config');
  throw err;
}

/** `GET /config`, `PATCH /config` (merge, validate, compare-and-set), `PUT /config` (validate, replace) (spec §2). */
export function configRoutes(deps: AgentApiDeps): Route[] {
  const { dcs, control } = deps;
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
          const written = await dcs.put(DcsKey.config, JSON.stringify(merged), { if: { revision: stored.revision } });
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
          await dcs.put(DcsKey.config, JSON.stringify(body));
          control.wake();
          setJsonBody(ctx, body);
        },
      },
    },
  ];
}
