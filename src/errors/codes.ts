import { AppError } from './app-error.js';

/** Codes produced by the HTTP shell itself; capabilities keep their own tables in their errors.ts. */
export const HttpErrorCodes = {
  NOT_FOUND: 'HTTP_NOT_FOUND',
  METHOD_NOT_ALLOWED: 'HTTP_METHOD_NOT_ALLOWED',
  BODY_TOO_LARGE: 'HTTP_BODY_TOO_LARGE',
  /** 408: the body stopped arriving (BODY_READ_TIMEOUT_MS without a byte) before Content-Length was reached. */
  BODY_TIMEOUT: 'HTTP_BODY_TIMEOUT',
  MALFORMED_JSON: 'HTTP_MALFORMED_JSON',
  UNSUPPORTED_MEDIA_TYPE: 'HTTP_UNSUPPORTED_MEDIA_TYPE',
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  INTERNAL: 'INTERNAL_ERROR',
  NOT_READY: 'HTTP_NOT_READY',
  RATE_LIMITED: 'RATE_LIMITED',
} as const;

export interface ValidationIssue {
  path: string;
  message: string;
}

/**
 * 400 VALIDATION_FAILED: `details.issues` names each bad field (`path`, e.g. `body.scopes`) and why (`message`, a
 * phrase after the field's name), and the sentence repeats the first few so a reader of the bare error knows too.
 */
export function validationError(issues: ValidationIssue[], where = 'request'): AppError {
  const shown = issues
    .slice(0, 3)
    .map((i) => `${i.path.replace(/^(body|query|path|params)\./, '')} ${i.message}`)
    .join('; ');
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
  return new AppError(
    HttpErrorCodes.VALIDATION_FAILED,
    400,
    issues.length > 0 ? `The ${where} is not valid: ${shown}${more}.` : `The ${where} is not valid.`,
    { details: { issues } },
  );
}
