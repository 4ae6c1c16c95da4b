/**
 * Scenarios: an owner's scripted test calls of an assistant, run over the real chat and voice paths by simulated
 * callers, each expectation judged with its evidence (docs/simulations.md).
 */
import type { AnyRoute } from '../http/index.js';
import type { ScenarioDrivers } from './drivers.js';
import type { Logger } from '../log/index.js';
import type { Sql } from '../db/index.js';
import { scenarioRoutes } from './routes.js';
import { createScenarioRunner, type RunCompleted, type ScenarioRunner } from './runner.js';

export { scenarioDrivers } from './wiring.js';
export { ScenarioErrorCodes } from './errors.js';
export type { ScenarioDrivers } from './drivers.js';
export type { RunCompleted, ScenarioRunner } from './runner.js';

export interface ScenariosCapability {
  routes: AnyRoute[];
  runner: ScenarioRunner;
  lifecycle: { name: string; start(): void; stop(): Promise<void> };
}

/** Builds the routes and the runner. Does no I/O. */
export function scenariosCapability(deps: {
  sql: Sql;
  log: Logger;
  drivers: ScenarioDrivers;
  onCompleted?: (event: RunCompleted) => Promise<void>;
}): ScenariosCapability {
  const runner = createScenarioRunner(deps);
  return {
    routes: scenarioRoutes({ sql: deps.sql, runner }),
    runner,
    lifecycle: { name: 'scenario runs', start: () => undefined, stop: () => runner.stop() },
  };
}
