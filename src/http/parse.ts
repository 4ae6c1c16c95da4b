import { AppError, HttpErrorCodes, validationError } from '../errors/index.js';
import { safeParseWithFieldMessages, zodIssues } from './errors.js';
import type { AnyRoute, Reply } from './types.js';
import { assertStorableInput } from './validation.js';

/** One part of a request (path params, query, body) checked against its zod schema; 400 names the part. */
export function parsePart(
  schema: AnyRoute['schemas']['params'],
  value: unknown,
  where: 'params' | 'query' | 'body',
): unknown {
  if (!schema) return value;
  assertStorableInput(value, where); // NUL, lone surrogates, hostile depth: 400 before any schema or query sees them
  const parsed = safeParseWithFieldMessages(schema, value);
  if (!parsed.success) throw validationError(zodIssues(parsed.error, where), where === 'params' ? 'path' : where);
  return parsed.data;
}

export function parseBody(route: AnyRoute, raw: Buffer, contentType: string | undefined): unknown {
  if (!route.schemas.body) return undefined;
  const isJson = contentType === undefined || /^application\/([\w.+-]+\+)?json\b/i.test(contentType);
  if (raw.length > 0 && !isJson) {
    if (route.rawBody) return parsePart(route.schemas.body, undefined, 'body');
    throw new AppError(HttpErrorCodes.UNSUPPORTED_MEDIA_TYPE, 415, 'Send the body as application/json.');
  }
  let value: unknown = {};
  if (raw.length > 0) {
    try {
      value = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new AppError(HttpErrorCodes.MALFORMED_JSON, 400, 'The request body is not valid JSON.');
    }
  }
  return parsePart(route.schemas.body, value, 'body');
}

/** Tests: a 2xx answer must be declared by the route and match its schema. */
export function checkResponse(route: AnyRoute, reply: Reply): void {
  if (reply.status >= 400) return;
  const schema = route.schemas.response[reply.status];
  if (!schema)
    throw new Error(
      `${route.method} ${route.path} answered ${reply.status}, which its response schemas do not declare`,
    );
  if (reply.kind !== 'json') return;
  const parsed = schema.safeParse(reply.body);
  if (!parsed.success)
    throw new Error(
      `${route.method} ${route.path} answered a body that does not match its schema: ${parsed.error.message}`,
    );
}
