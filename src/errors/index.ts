export { AppError, isAppError, type AppErrorOptions } from './app-error.js';
export { HttpErrorCodes, validationError, type ValidationIssue } from './codes.js';
