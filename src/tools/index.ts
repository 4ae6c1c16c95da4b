/**
 * Tools: server tools an assistant may call (the owner's HTTPS endpoints), signed per Standard Webhooks with the
 * assistant's tool secret, arguments checked against the tool's JSON Schema before any request. Chat calls them
 * through the {@link ToolRuntime}.
 */
import type { Deps } from '../deps.js';
import { publicAddressesOnly, type AddressPolicy, type LookupAll } from '../documents/index.js';
import type { AnyRoute } from '../http/index.js';
import { createSecretBox } from '../webhooks/index.js';
import { toolRoutes } from './routes.js';
import { toolAnalyticsRoutes } from './analytics.js';
import { createToolRuntime, type ToolRuntime } from './runtime.js';

export {
  createToolRuntime,
  type ToolRuntime,
  type RuntimeTool,
  type ToolCallContext,
  type ToolOutcome,
} from './runtime.js';
export { ToolErrorCodes } from './errors.js';
export { MAX_RESPONSE_BYTES } from './caller.js';
export { argumentIssues } from './json-schema.js';

export interface ToolsOptions {
  /** Overrides the address policy (and WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
  addressPolicy?: AddressPolicy;
  lookup?: LookupAll;
  /** Waits between an async tool's attempts. */
  asyncBackoffMs?: readonly number[];
}

export interface ToolsCapability {
  routes: AnyRoute[];
  runtime: ToolRuntime;
}

/** Any address allowed: WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (local development against a receiver on this machine). */
const anyAddress: AddressPolicy = Object.freeze({ isAllowed: () => true });

/** Builds the routes and the runtime. Does no I/O. */
export function toolsCapability(
  deps: Pick<Deps, 'sql' | 'config' | 'log'>,
  options: ToolsOptions = {},
): ToolsCapability {
  const secrets = createSecretBox(deps.config.secretKey, 'assistant tool secrets');
  const allowPrivate = deps.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS;
  const policy = options.addressPolicy ?? (allowPrivate ? anyAddress : publicAddressesOnly);
  const lookup = options.lookup;
  const serviceDeps = { sql: deps.sql, secrets, allowPrivate: allowPrivate && !options.addressPolicy, policy, lookup };
  return {
    routes: [...toolRoutes(serviceDeps), ...toolAnalyticsRoutes(serviceDeps)],
    runtime: createToolRuntime({
      sql: deps.sql,
      secrets,
      policy,
      lookup,
      log: deps.log.child({ capability: 'tools' }),
      ...(options.asyncBackoffMs ? { backoffMs: options.asyncBackoffMs } : {}),
    }),
  };
}
