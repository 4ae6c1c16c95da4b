export { AppError, isAppError, type AppErrorOptions } from './app-error.js';
export { HttpErrorCodes, validationError, type ValidationIssue } from './codes.js';
export {
  DEPENDENCY_UNAVAILABLE,
  asDependencyFailure,
  dependencyUnavailable,
  type DependencyName,
} from './dependency.js';
