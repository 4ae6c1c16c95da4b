import { AppError, HttpErrorCodes } from '../errors/index.js';

/** Analytics has one failure of its own: a bad date range (a 400 like any validation failure). */
export const AnalyticsErrorCodes = { BAD_RANGE: HttpErrorCodes.VALIDATION_FAILED } as const;

export const analyticsErrors = {
  badRange: (message: string) =>
    new AppError(HttpErrorCodes.VALIDATION_FAILED, 400, message, {
      details: { issues: [{ path: 'query.from', message }] },
    }),
};
