import { AppError } from '../errors/index.js';

/**
 * The evals capability's error codes. NOT_FOUND and PROVIDER_NOT_CONFIGURED answer requests; USAGE_REFUSED,
 * PROVIDER_NOT_CONFIGURED, ASSISTANT_GONE and INTERRUPTED are also stored on a failed eval (`error_code`).
 * The plan refusal itself is metering's PLAN_LIMIT_EVALS (403 `plan_limit`).
 */
export const EvalErrorCodes = {
  /** 404: no such eval for this assistant (or the assistant is not the caller's). */
  NOT_FOUND: 'EVAL_NOT_FOUND',
  /** 503 at creation, or a stored failure: the assistant's chat provider is not configured on this deployment. */
  PROVIDER_NOT_CONFIGURED: 'EVAL_PROVIDER_NOT_CONFIGURED',
  /** Stored failure: metering refused a case mid-run (budget used up, plan changed, account inactive). */
  USAGE_REFUSED: 'EVAL_USAGE_REFUSED',
  /** Stored failure: the assistant no longer exists. */
  ASSISTANT_GONE: 'EVAL_ASSISTANT_GONE',
  /** Stored failure: the eval was claimed max_attempts times without finishing (its runner kept dying). */
  INTERRUPTED: 'EVAL_INTERRUPTED',
} as const;

export type EvalErrorCode = (typeof EvalErrorCodes)[keyof typeof EvalErrorCodes];

export const evalErrors = {
  notFound: () => new AppError(EvalErrorCodes.NOT_FOUND, 404, 'No such eval.'),
  providerNotConfigured: (name: string) =>
    new AppError(
      EvalErrorCodes.PROVIDER_NOT_CONFIGURED,
      503,
      `The chat provider "${name}" is not configured on this deployment.`,
    ),
};
