/** Evals: dashboard-only batches of test questions run like chat turns against an assistant, metered and scored. */
import type { AnyRoute } from '../http/index.js';
import { evalRoutes } from './routes.js';
import { createEvalRunner, type EvalRunner, type EvalRunnerOptions } from './runner.js';
import type { EvalDeps } from './service.js';

export { createEvalRunner } from './runner.js';
export { createEval, type EvalDeps } from './service.js';
export { tokenF1, scoreTokens } from './score.js';
export { factScore } from './facts.js';
export { EvalErrorCodes } from './errors.js';

export interface EvalsCapability {
  routes: AnyRoute[];
  /** Started by the running app on listen, stopped on close. */
  runner: EvalRunner;
}

/** Builds the routes and the (not yet started) runner. Does no I/O. */
export function evalsCapability(deps: EvalDeps, options: EvalRunnerOptions = {}): EvalsCapability {
  const runner = createEvalRunner(deps, options);
  return { routes: evalRoutes({ ...deps, onQueued: () => runner.kick() }), runner };
}
