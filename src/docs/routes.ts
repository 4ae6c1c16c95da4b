import { z } from 'zod';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';

/**
 * The OpenAPI document of record, served byte-identical at /api/v1/openapi.json and /api/openapi
 * (the docs site path). The bytes are computed once, when the app is built.
 */
export function openApiRoutes(documentBytes: () => Buffer): AnyRoute[] {
  const response = { 200: z.record(z.string(), z.unknown()).describe('OpenAPI 3.1 document') };
  const serve = () =>
    reply.bytes(documentBytes(), 'application/json; charset=utf-8', 200, { 'cache-control': 'public, max-age=300' });
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/openapi.json',
      auth: 'none',
      cors: true,
      schemas: { response },
      openapi: {
        summary: 'The OpenAPI document of record',
        description:
          "This document: OpenAPI 3.1, generated from the route table that also validates requests. The SDK's types are generated from it.",
        tags: ['Meta'],
        dependencyFree: true,
        errors: {
          431: 'The request line and headers are larger than the server accepts (answered by the HTTP layer).',
        },
      },
      handler: serve,
    }),
    defineRoute({
      method: 'GET',
      path: '/api/openapi',
      auth: 'none',
      cors: true,
      schemas: { response },
      openapi: { summary: 'The same document, for the docs site', hidden: true },
      handler: serve,
    }),
  ];
}
