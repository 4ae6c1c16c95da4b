import { z } from 'zod';
import { tenantOf, withAdmission, type Admission } from '../admission/index.js';
import { ownerOf } from '../auth/principal.js';
import { assistantIdParam, pageQuerySchema } from '../assistants/index.js';
import type { Config } from '../config/index.js';
import type { Sql } from '../db/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import { documentSchema, single, sourceSchema } from './schemas.js';
import * as service from './service.js';
import { v1WriteRoutes } from './v1-write-routes.js';

const page = z.object({ documents: z.array(documentSchema), nextCursor: z.string().nullable() });
const documentParams = z.object({ documentId: z.string().min(1).max(100) });
const assistantParams = z.object({ assistantId: assistantIdParam });
const tags = ['Documents'];
const errors = {
  401: 'Missing or invalid API key',
  403: 'The key lacks the scope',
  404: 'No such document (or not yours)',
};

export interface DocumentRouteDeps {
  sql: Sql;
  config: Pick<Config, 'UPLOAD_LIMIT_BYTES'>;
  service: service.DocumentServiceDeps;
  /** Document writes take a slot of the instance's work pool (src/admission): 503 SERVICE_OVERLOADED past it. */
  admission?: Admission | undefined;
}

/** v1 owner routes (Bearer key) and the dashboard-only upload and source routes (session cookie). */
export function documentRoutes(deps: DocumentRouteDeps): AnyRoute[] {
  const { sql } = deps;
  /** A page of documents: the v1 listing and the dashboard's sources listing answer the same. */
  const listPage = async (owner: ReturnType<typeof ownerOf>, filter: Parameters<typeof service.listDocuments>[2]) => {
    const result = await service.listDocuments(sql, owner, filter);
    return reply.json({ documents: result.documents.map(service.presentDocument), nextCursor: result.nextCursor });
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/documents',
      auth: 'bearer',
      scope: 'documents:read',
      schemas: { query: pageQuerySchema.extend({ assistantId: assistantIdParam.optional() }), response: { 200: page } },
      openapi: {
        summary: 'List documents (optionally of one assistant)',
        description: "Documents of the key's account with their processing status, newest first, a page at a time.",
        tags,
        errors: { 401: errors[401], 403: errors[403], 404: 'No such assistant' },
      },
      handler: (ctx) => listPage(ownerOf(ctx), ctx.query),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/documents/:documentId',
      auth: 'bearer',
      scope: 'documents:read',
      schemas: { params: documentParams, response: { 200: single } },
      openapi: {
        summary: 'Get a document and its processing status',
        description: 'Status moves pending -> processing -> ready, or failed with an error.',
        tags,
        errors,
      },
      handler: async (ctx) =>
        reply.json({
          document: service.presentDocument(await service.getDocument(sql, ownerOf(ctx), ctx.params.documentId)),
        }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/documents/:documentId',
      auth: 'bearer',
      scope: 'documents:write',
      schemas: { params: documentParams, response: { 200: z.object({ ok: z.literal(true) }) } },
      openapi: {
        summary: 'Delete a document and its passages',
        description: 'The assistant stops answering from it at once.',
        tags,
        errors,
      },
      handler: async (ctx) => {
        await service.deleteDocument(sql, ownerOf(ctx), ctx.params.documentId);
        return reply.json({ ok: true });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/documents/:documentId/reprocess',
      auth: 'bearer',
      scope: 'documents:write',
      schemas: { params: documentParams, body: z.object({}).strict(), response: { 202: single } },
      openapi: {
        summary: 'Process a document again (status back to pending)',
        description: 'Queues the document for extraction and indexing again (202); follow its status with GET.',
        tags,
        errors,
      },
      handler: async (ctx) =>
        reply.json(
          {
            document: service.presentDocument(
              await withAdmission(deps.admission, tenantOf(ownerOf(ctx), undefined), ctx.signal, () =>
                service.reprocessDocument(deps.service, ownerOf(ctx), ctx.params.documentId),
              ),
            ),
          },
          202,
        ),
    }),

    ...v1WriteRoutes(deps),

    // ---- dashboard-only (not in the v1 document) ----
    defineRoute({
      method: 'POST',
      path: '/api/assistants/:assistantId/uploads',
      auth: 'session',
      rawBody: true,
      bodyLimit: deps.config.UPLOAD_LIMIT_BYTES,
      schemas: {
        params: assistantParams,
        query: z.object({ filename: z.string().max(300).optional() }),
        body: z.unknown(),
        response: { 201: single },
      },
      openapi: {
        summary: 'Upload a file (text, Markdown, HTML, PDF): multipart "file" part, or the raw body with ?filename=',
        hidden: true,
        errors: { 413: 'Larger than UPLOAD_LIMIT_BYTES', 415: 'Not text, Markdown, HTML or PDF' },
      },
      handler: async (ctx) => {
        const row = await withAdmission(deps.admission, tenantOf(ownerOf(ctx), undefined), ctx.signal, () =>
          service.uploadDocument(deps.service, ownerOf(ctx), ctx.params.assistantId, {
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
      path: '/api/assistants/:assistantId/sources',
      auth: 'session',
      schemas: { params: assistantParams, body: sourceSchema, response: { 201: single } },
      openapi: { summary: 'Add a knowledge source: a URL, a text or FAQ pairs', hidden: true },
      handler: async (ctx) => {
        const row = await withAdmission(deps.admission, tenantOf(ownerOf(ctx), undefined), ctx.signal, () =>
          service.addSource(deps.service, ownerOf(ctx), ctx.params.assistantId, ctx.body),
        );
        return reply.json({ document: service.presentDocument(row) }, 201);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/assistants/:assistantId/sources',
      auth: 'session',
      schemas: { params: assistantParams, query: pageQuerySchema, response: { 200: page } },
      openapi: { summary: "List an assistant's documents", hidden: true },
      handler: (ctx) => listPage(ownerOf(ctx), { ...ctx.query, assistantId: ctx.params.assistantId }),
    }),
  ];
}
