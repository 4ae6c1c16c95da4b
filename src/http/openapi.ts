import { createHash } from 'node:crypto';
import { z } from 'zod';
import { errorBodySchema } from './errors.js';
import type { AnyRoute } from './types.js';

export interface OpenApiOptions {
  title: string;
  version: string;
  description?: string;
  /** Which routes this document covers (the v1 document: /api/v1 and not hidden). */
  include: (route: AnyRoute) => boolean;
  /** Security requirements per authenticator name; absent means no security. */
  security: Record<string, Array<Record<string, string[]>>>;
  securitySchemes: Record<string, unknown>;
}

type JsonSchema = Record<string, unknown>;

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete json['$schema'];
  return json;
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parametersOf(route: AnyRoute): unknown[] {
  const out: unknown[] = [];
  const pathParams = toSchema(route.schemas.params ?? z.object({}), 'input');
  const pathProps = (pathParams['properties'] ?? {}) as Record<string, JsonSchema>;
  for (const segment of route.path.split('/')) {
    if (!segment.startsWith(':')) continue;
    const name = segment.slice(1);
    out.push({ name, in: 'path', required: true, schema: pathProps[name] ?? { type: 'string' } });
  }
  if (route.schemas.query) {
    const query = toSchema(route.schemas.query, 'input');
    const props = (query['properties'] ?? {}) as Record<string, JsonSchema>;
    const required = new Set((query['required'] ?? []) as string[]);
    for (const [name, schema] of Object.entries(props)) {
      const { description, ...rest } = schema;
      out.push({ name, in: 'query', required: required.has(name), schema: rest, ...(description ? { description } : {}) });
    }
  }
  return out;
}

/** Builds the OpenAPI 3.1 document from the route table: the schemas that validate also document. */
export function buildOpenApiDocument(routes: readonly AnyRoute[], options: OpenApiOptions): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const sorted = [...routes].filter(options.include).sort((a, b) => (a.path + a.method).localeCompare(b.path + b.method));
  for (const route of sorted) {
    const meta = route.openapi;
    const responses: Record<string, unknown> = {};
    for (const [status, schema] of Object.entries(route.schemas.response) as Array<[string, z.ZodType | undefined]>) {
      if (!schema) continue;
      const contentType = meta.contentTypes?.[Number(status)] ?? 'application/json';
      responses[status] = { description: meta.responseDescriptions?.[Number(status)] ?? 'Success', content: { [contentType]: { schema: toSchema(schema, 'output') } } };
    }
    for (const [status, description] of Object.entries(meta.errors ?? {})) {
      responses[status] = { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    responses['default'] = { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    const operation: Record<string, unknown> = {
      operationId: meta.operationId ?? `${route.method.toLowerCase()}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: meta.summary,
      ...(meta.description ? { description: meta.description } : {}),
      ...(meta.tags ? { tags: meta.tags } : {}),
      parameters: parametersOf(route),
      responses,
    };
    const security = options.security[route.auth];
    if (security) operation['security'] = security;
    if (route.schemas.body) {
      operation['requestBody'] = { required: true, content: { 'application/json': { schema: toSchema(route.schemas.body, 'input') } } };
    }
    const path = openApiPath(route.path);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, ...(options.description ? { description: options.description } : {}) },
    paths,
    components: { schemas: { Error: toSchema(errorBodySchema, 'output') }, securitySchemes: options.securitySchemes },
  };
}

/** The frozen list of documented operations and its sha256 (spec, Versioning rule 5). */
export function operationsFingerprint(document: JsonSchema): { operations: string[]; sha256: string } {
  const operations: string[] = [];
  for (const [path, item] of Object.entries(document['paths'] as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) operations.push(`${method.toUpperCase()} ${path}`);
  }
  operations.sort();
  return { operations, sha256: createHash('sha256').update(operations.join('\n')).digest('hex') };
}
