import { AppError } from '../errors/index.js';

/** The tools capability's error codes (stable; listed in docs/api.md, Error codes). */
export const ToolErrorCodes = {
  /** 404: no such tool of this assistant. */
  NOT_FOUND: 'TOOL_NOT_FOUND',
  /** 409 (field `name`): the assistant already has a tool of this name. */
  NAME_TAKEN: 'TOOL_NAME_TAKEN',
  /** 409: the assistant has the most tools it may have (32). */
  LIMIT: 'TOOL_LIMIT',
  /**
   * 400 (field `url`): not https (plain http only with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true), carries credentials, or
   * points to a private, local or reserved address.
   */
  URL_NOT_ALLOWED: 'TOOL_URL_NOT_ALLOWED',
  /** 409: rotate-secret on an assistant without tools (it has no secret yet; creating its first tool makes one). */
  NO_SECRET: 'TOOL_NO_SECRET',
} as const;

export const toolErrors = {
  notFound: () => new AppError(ToolErrorCodes.NOT_FOUND, 404, 'No such tool.'),
  nameTaken: () =>
    new AppError(ToolErrorCodes.NAME_TAKEN, 409, 'This assistant already has a tool of that name.', {
      details: { field: 'name' },
    }),
  limit: (max: number) =>
    new AppError(ToolErrorCodes.LIMIT, 409, `An assistant can have at most ${max} tools.`, {
      details: { maxTools: max },
    }),
  urlNotAllowed: (message: string) =>
    new AppError(ToolErrorCodes.URL_NOT_ALLOWED, 400, message, { details: { field: 'url' } }),
  noSecret: () =>
    new AppError(ToolErrorCodes.NO_SECRET, 409, 'This assistant has no tool secret yet: create its first tool.'),
};
