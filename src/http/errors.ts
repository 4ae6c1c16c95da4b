import { z } from 'zod';
import { AppError, HttpErrorCodes, type ValidationIssue } from '../errors/index.js';

/** The one error body (docs/api.md, Errors). */
export const errorBodySchema = z.object({
  error: z.string().describe('A human sentence.'),
  code: z.string().describe('Stable, documented code, e.g. VALIDATION_FAILED.'),
  reason: z.string().optional().describe('Present only where the contract names a reason (voice_unavailable, ...).'),
  details: z.unknown().optional(),
  requestId: z.string(),
});

export type ErrorBody = z.output<typeof errorBodySchema>;

export function errorBody(err: AppError, requestId: string): ErrorBody {
  const body: ErrorBody = { error: err.message, code: err.code, requestId };
  if (err.reason !== undefined) body.reason = err.reason;
  if (err.details !== undefined) body.details = err.details;
  return body;
}

export function internalError(): AppError {
  return new AppError(
    HttpErrorCodes.INTERNAL,
    500,
    'Something went wrong on our side. Quote the request id if you report it.',
  );
}

export function zodIssues(error: z.ZodError, prefix: string): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter((s) => s.length > 0).join('.'),
    message: issue.message,
  }));
}
