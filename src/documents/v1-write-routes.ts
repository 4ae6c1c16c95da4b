import { z } from 'zod';
import { tenantOf, withAdmission, type Admission } from '../admission/index.js';
import { ownerOf } from '../auth/principal.js';
import { assistantIdParam } from '../assistants/index.js';
import type { Config } from '../config/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { single, uploadFormSchema, v1SourceSchema } from './schemas.js';
import * as service from './service.js';

const tags = ['Documents'];

/**
 * v1 routes that add documents with an API key (documents:write): a file upload (the same formats and size limit
 * as the dashboard's) and a URL, text or FAQ source. Both answer 201 with the document, `pending` until ingested.
 */
export function v1WriteRoutes(deps: {
  config: Pick<Config, 'UPLOAD_LIMIT_BYTES'>;
  service: service.DocumentServiceDeps;
  admission?: Admission | undefined;
}): AnyRoute[] {
  const limitMb = Math.round((deps.config.UPLOAD_LIMIT_BYTES / (1024 * 1024)) * 10) / 10;
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/documents/upload',
      auth: 'bearer',
      scope: 'documents:write',
      rawBody: true,
      bodyLimit: deps.config.UPLOAD_LIMIT_BYTES,
      schemas: {
        query: z.object({
          assistantId: assistantIdParam.optional().describe('The assistant (or send an assistantId form field).'),
          filename: z.string().max(300).optional().describe('The file name, when the body is the raw file.'),
        }),
        body: z.unknown(),
        response: { 201: single },
      },
      openapi: {
        summary: 'Upload a file (text, Markdown, HTML or PDF) to an assistant',
        description:
          `A multipart/form-data body with a \`file\` part (\`curl -F file=@handbook.pdf\`), or the raw file as the ` +
          `body with \`?filename=\`. At most UPLOAD_LIMIT_BYTES (${limitMb} MB by default on this build); the type ` +
          'is checked against the bytes. Answers 201 with the document, `pending`; follow its status with GET.',
        tags,
        requestContent: {
          'multipart/form-data': uploadFormSchema,
          'application/octet-stream': z.string().meta({ format: 'binary' }),
        },
        errors: {
          400: 'No file in the body (DOCUMENT_EMPTY_UPLOAD), or no assistant named (VALIDATION_FAILED)',
          404: 'No such assistant',
          413: 'Larger than the upload limit',
          503: 'The service is busy (SERVICE_OVERLOADED), or a dependency did not answer (DEPENDENCY_UNAVAILABLE); with Retry-After',
          415: 'Not text, Markdown, HTML or PDF (DOCUMENT_UNSUPPORTED_TYPE)',
        },
      },
      handler: async (ctx) => {
        const row = await withAdmission(deps.admission, tenantOf(ownerOf(ctx), undefined), ctx.signal, () =>
          service.uploadDocument(deps.service, ownerOf(ctx), ctx.query.assistantId, {
            rawBody: ctx.rawBody ?? Buffer.alloc(0),
            contentType: ctx.headers['content-type'],
            filename: ctx.query.filename,
          }),
        );
        return reply.json({ document: service.presentDocument(row) }, 201);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/documents',
      auth: 'bearer',
      scope: 'documents:write',
      schemas: { body: v1SourceSchema, response: { 201: single } },
      openapi: {
        summary: 'Add a URL, text or FAQ source to an assistant',
        description:
          'A URL is fetched (public addresses only) and indexed; a text or FAQ pairs are indexed as given. Answers 201 ' +
          'with the document, `pending`; follow its status with GET.',
        tags,
        errors: {
          400: 'Invalid body, or a URL that can never be fetched (DOCUMENT_URL_NOT_ALLOWED)',
          404: 'No such assistant',
          503: 'The service is busy (SERVICE_OVERLOADED), or a dependency did not answer (DEPENDENCY_UNAVAILABLE); with Retry-After',
        },
      },
      handler: async (ctx) => {
        const { assistantId, ...source } = ctx.body;
        const row = await withAdmission(deps.admission, tenantOf(ownerOf(ctx), undefined), ctx.signal, () =>
          service.addSource(deps.service, ownerOf(ctx), assistantId, source),
        );
        return reply.json({ document: service.presentDocument(row) }, 201);
      },
    }),
  ];
}
