import { z } from 'zod';
import { errorBodySchema } from './errors.js';
import type { AnyRoute, RouteDeprecation } from './types.js';

export interface OpenApiOptions {
  title: string;
  version: string;
  description?: string;
  /** Which routes this document covers (the v1 document: /api/v1 and not hidden). */
  include: (route: AnyRoute) => boolean;
  /** Security requirements per authenticator name; absent means no security. */
  security: Record<string, Array<Record<string, string[]>>>;
  securitySchemes: Record<string, unknown>;
  /** Description of every tag the routes use (a tag without one is a build error). */
  tags?: Record<string, string>;
  /** Default: one server, the deployment's base address as a variable. */
  servers?: unknown[];
  contact?: Record<string, string>;
  license?: Record<string, string>;
}

type JsonSchema = Record<string, unknown>;

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** Tags of the v1 document, in the order a reader meets them. */
export const V1_TAGS: Record<string, string> = {
  Chat: 'Text chat with an assistant: one JSON answer, or a Server-Sent Events stream.',
  Voice:
    'Realtime voice sessions: mint, heartbeat supervision, the playback gate (NDJSON) and end. Audio flows over the media WebSocket named by the mint.',
  Assistants: "Create, read, update and delete the assistants an API key's account owns.",
  Documents:
    'The knowledge documents of an assistant: upload a file, add a URL, text or FAQ source, list, read, delete, reprocess.',
  Conversations: 'Conversations with their messages, sources and voice recordings.',
  Analytics: 'Per-assistant analytics: totals, outcomes, feedback, a daily series.',
  Overview: "The account's day across every assistant, and the log of every call.",
  Widget: "Keyless routes of the embeddable widget, behind the assistant's domain allowlist and rate limits.",
  Meta: 'The contract itself.',
  Calls:
    "Calls Parley places through a registered number's carrier: one call out, its status, cancel, and the carrier's signed callbacks.",
  'Phone numbers':
    "Carrier numbers routed to an assistant, and the carrier's signed call webhook that answers them with a media stream.",
  Webhooks:
    'Endpoints that receive signed events (Standard Webhooks): calls, documents, budgets; their deliveries and replays.',
};

/**
 * Converts a zod schema. Schemas carrying `.meta({ id })` come back as `#/$defs/<id>` references; they are collected
 * into `defs` (and the references rewritten to components) so that one schema is one named component.
 */
function toSchema(schema: z.ZodType, io: 'input' | 'output', defs: Map<string, JsonSchema>): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete json['$schema'];
  const local = (json['$defs'] ?? {}) as Record<string, JsonSchema>;
  delete json['$defs'];
  // A named schema whose input differs from its output (defaults, transforms) gets its own `<id>Input` component.
  const renames = new Map<string, string>();
  for (const [id, def] of Object.entries(local)) {
    const existing = defs.get(id);
    if (existing === undefined || JSON.stringify(existing) === JSON.stringify(def)) continue;
    if (io === 'input') renames.set(id, `${id}Input`);
    else throw new Error(`two different schemas are named ${id}`);
  }
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (value === null || typeof value !== 'object') return value;
    const out: JsonSchema = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) {
        const id = v.slice('#/$defs/'.length);
        out[k] = `#/components/schemas/${renames.get(id) ?? id}`;
      } else out[k] = rewrite(v);
    }
    return out;
  };
  for (const [id, def] of Object.entries(local)) {
    const name = renames.get(id) ?? id;
    const rewritten = rewrite(def) as JsonSchema;
    const existing = defs.get(name);
    if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(rewritten))
      throw new Error(`two different schemas are named ${name}`);
    defs.set(name, rewritten);
  }
  return rewrite(json) as JsonSchema;
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parametersOf(route: AnyRoute, defs: Map<string, JsonSchema>): unknown[] {
  const out: unknown[] = [];
  const pathParams = toSchema(route.schemas.params ?? z.object({}), 'input', defs);
  const pathProps = (pathParams['properties'] ?? {}) as Record<string, JsonSchema>;
  for (const segment of route.path.split('/')) {
    if (!segment.startsWith(':')) continue;
    const name = segment.slice(1);
    const { description, ...schema } = pathProps[name] ?? { type: 'string' };
    out.push({ name, in: 'path', required: true, schema, ...(description ? { description } : {}) });
  }
  if (route.schemas.query) {
    const query = toSchema(route.schemas.query, 'input', defs);
    const props = (query['properties'] ?? {}) as Record<string, JsonSchema>;
    const required = new Set((query['required'] ?? []) as string[]);
    for (const [name, schema] of Object.entries(props)) {
      const { description, deprecated, ...rest } = schema;
      out.push({
        name,
        in: 'query',
        required: required.has(name),
        schema: rest,
        ...(description ? { description } : {}),
        ...(deprecated === true ? { deprecated: true } : {}),
      });
    }
  }
  return out;
}

/**
 * Error answers every route of an auth kind can give, so the document says what the shell and authenticators
 * really answer without each route repeating it. A route's own `errors` description wins for its status.
 */
function standardErrors(route: AnyRoute): Record<number, string> {
  const out: Record<number, string> = {};
  const scope = route.scope ? `the ${route.scope} scope` : 'the scope this route needs';
  if (route.auth === 'bearer') {
    out[401] = 'Missing or invalid API key.';
    out[403] = `The key lacks ${scope}, or the account is not active.`;
  } else if (route.auth === 'bearer-or-keyless') {
    out[401] = 'Invalid API key (keyless callers send no Authorization header).';
    out[403] = `Bearer: the key lacks ${scope}. Keyless: the Origin is not allowed or the visitor signature is missing or invalid.`;
  }
  if ((route.auth === 'bearer' || route.auth === 'bearer-or-keyless') && route.rateLimitExempt !== true) {
    out[429] =
      "Request rate limit (plain, no reason): the API key's, or for keyless callers the visitor's or assistant's. Retry-After says when to retry.";
  }
  if (route.schemas.body || route.schemas.query || route.schemas.params)
    out[400] = 'The request does not match the schema (VALIDATION_FAILED, details name the fields).';
  if (route.openapi.dependencyFree !== true) {
    out[503] =
      'A dependency (database, shared store) did not answer in time: DEPENDENCY_UNAVAILABLE, with Retry-After.';
  }
  return out;
}

/** The error answer of one status: the Error body; Retry-After where the server sends it. */
function errorResponse(status: number, description: string): Record<string, unknown> {
  if (status === 431) {
    // Answered by the HTTP layer itself before any route runs: not the JSON error body.
    return { description, content: { 'text/html': { schema: { type: 'string' } } } };
  }
  return {
    description,
    ...(status === 429 || status === 503
      ? { headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } }
      : {}),
    content: { 'application/json': { schema: ERROR_REF } },
  };
}

/** Response headers of a deprecated operation (docs/api.md, Versioning and deprecation). */
function deprecationHeaders(deprecation: RouteDeprecation): Record<string, unknown> {
  return {
    Deprecation: { $ref: '#/components/headers/Deprecation' },
    ...(deprecation.sunset ? { Sunset: { $ref: '#/components/headers/Sunset' } } : {}),
    ...(deprecation.link ? { Link: { $ref: '#/components/headers/DeprecationLink' } } : {}),
  };
}

const DAY_MS = 86_400_000;

/**
 * The answer headers of a deprecated route (computed once, at startup): `Deprecation: @<unix seconds>` (RFC 9745),
 * `Sunset: <HTTP-date>` (RFC 8594) and `Link: <...>; rel="deprecation"`. A malformed date, or a sunset less than
 * 90 days after the deprecation (docs/api.md, Versioning and deprecation), is refused when the route table is built.
 */
export function deprecationResponseHeaders(deprecation: RouteDeprecation): Record<string, string> {
  const since = Date.parse(deprecation.since);
  if (Number.isNaN(since)) throw new Error(`deprecated.since is not a date: ${deprecation.since}`);
  const headers: Record<string, string> = { deprecation: `@${Math.floor(since / 1000)}` };
  if (deprecation.sunset !== undefined) {
    const sunset = Date.parse(deprecation.sunset);
    if (Number.isNaN(sunset)) throw new Error(`deprecated.sunset is not a date: ${deprecation.sunset}`);
    if (sunset - since < 90 * DAY_MS)
      throw new Error(
        `deprecated.sunset ${deprecation.sunset} is less than 90 days after ${deprecation.since} (docs/api.md, Versioning and deprecation)`,
      );
    headers['sunset'] = new Date(sunset).toUTCString();
  }
  if (deprecation.link !== undefined) headers['link'] = `<${deprecation.link}>; rel="deprecation"; type="text/html"`;
  return headers;
}

function deprecationNote(deprecation: RouteDeprecation): string {
  return (
    `Deprecated since ${deprecation.since}` +
    (deprecation.sunset ? `; may be removed after ${deprecation.sunset}` : '') +
    (deprecation.link ? ` (${deprecation.link})` : '') +
    '. Answers carry a Deprecation header' +
    (deprecation.sunset ? ' and a Sunset header.' : '.')
  );
}

const HEADERS: Record<string, unknown> = {
  RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
  Deprecation: {
    description: 'This operation is deprecated, since the given time (RFC 9745: @<unix seconds>).',
    schema: { type: 'string' },
  },
  Sunset: { description: 'When this operation may be removed (RFC 8594, an HTTP-date).', schema: { type: 'string' } },
  DeprecationLink: { description: 'Link rel="deprecation" to the migration notes.', schema: { type: 'string' } },
};

/** The header components the operations refer to (an unused component is a lint warning). */
function usedHeaders(paths: unknown): Record<string, unknown> {
  const text = JSON.stringify(paths);
  return Object.fromEntries(
    Object.entries(HEADERS).filter(([name]) => text.includes(`"#/components/headers/${name}"`)),
  );
}

function operationIdOf(route: AnyRoute): string {
  return (
    route.openapi.operationId ??
    `${route.method.toLowerCase()}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`
  );
}

/** Builds the OpenAPI 3.1 document from the route table: the schemas that validate also document. */
export function buildOpenApiDocument(routes: readonly AnyRoute[], options: OpenApiOptions): JsonSchema {
  const defs = new Map<string, JsonSchema>();
  const paths: Record<string, Record<string, unknown>> = {};
  const usedTags = new Set<string>();
  const sorted = [...routes]
    .filter(options.include)
    .sort((a, b) => (a.path + a.method).localeCompare(b.path + b.method));
  for (const route of sorted) {
    const meta = route.openapi;
    const deprecation = meta.deprecated;
    if (deprecation) deprecationResponseHeaders(deprecation); // refuses malformed dates before they are documented
    const responses: Record<string, unknown> = {};
    for (const [status, schema] of Object.entries(route.schemas.response) as Array<[string, z.ZodType | undefined]>) {
      if (!schema) continue;
      const contentType = meta.contentTypes?.[Number(status)] ?? 'application/json';
      const content: Record<string, unknown> = { [contentType]: { schema: toSchema(schema, 'output', defs) } };
      for (const [type, alternate] of Object.entries(meta.alternateContent?.[Number(status)] ?? {})) {
        content[type] = { schema: toSchema(alternate, 'output', defs) };
      }
      responses[status] = {
        description: meta.responseDescriptions?.[Number(status)] ?? 'Success',
        ...(deprecation ? { headers: deprecationHeaders(deprecation) } : {}),
        content,
      };
    }
    const errors: Record<number, string> = { ...standardErrors(route) };
    for (const [status, description] of Object.entries(meta.errors ?? {}))
      if (description) errors[Number(status)] = description;
    for (const status of Object.keys(errors)
      .map(Number)
      .sort((a, b) => a - b))
      responses[String(status)] = errorResponse(status, errors[status]!);
    responses['default'] = {
      description: 'Any other error, with the same Error body.',
      content: { 'application/json': { schema: ERROR_REF } },
    };
    for (const tag of meta.tags ?? []) usedTags.add(tag);
    const description = [meta.description, deprecation ? deprecationNote(deprecation) : undefined]
      .filter(Boolean)
      .join('\n\n');
    const operation: Record<string, unknown> = {
      operationId: operationIdOf(route),
      summary: meta.summary,
      ...(description ? { description } : {}),
      ...(meta.tags ? { tags: meta.tags } : {}),
      ...(deprecation ? { deprecated: true } : {}),
      parameters: parametersOf(route, defs),
      responses,
    };
    const security = options.security[route.auth];
    if (security) operation['security'] = security;
    if (meta.requestContent) {
      const content: Record<string, unknown> = {};
      for (const [type, schema] of Object.entries(meta.requestContent))
        content[type] = { schema: toSchema(schema, 'input', defs) };
      operation['requestBody'] = { required: true, content };
    } else if (route.schemas.body) {
      operation['requestBody'] = {
        required: true,
        content: { 'application/json': { schema: toSchema(route.schemas.body, 'input', defs) } },
      };
    }
    const path = openApiPath(route.path);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  const tagDescriptions = { ...V1_TAGS, ...options.tags };
  const tags = [...usedTags]
    .sort((a, b) => Object.keys(tagDescriptions).indexOf(a) - Object.keys(tagDescriptions).indexOf(b))
    .map((name) => {
      const description = tagDescriptions[name];
      if (description === undefined)
        throw new Error(`OpenAPI tag ${name} has no description (add it to V1_TAGS or options.tags)`);
      return { name, description };
    });
  const schemas: Record<string, JsonSchema> = { Error: toSchema(errorBodySchema, 'output', defs) };
  for (const name of [...defs.keys()].sort()) schemas[name] = defs.get(name)!;
  return {
    openapi: '3.1.0',
    info: {
      title: options.title,
      version: options.version,
      ...(options.description ? { description: options.description } : {}),
      contact: options.contact ?? { name: 'The operator of this Parley deployment' },
      license: options.license ?? { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: options.servers ?? [
      {
        url: '{baseUrl}',
        description: 'A Parley deployment (its PUBLIC_URL).',
        variables: {
          baseUrl: { default: 'http://localhost:3000', description: 'Scheme, host and port of the deployment.' },
        },
      },
    ],
    tags,
    paths,
    components: {
      schemas,
      headers: usedHeaders(paths),
      securitySchemes: options.securitySchemes,
    },
  };
}
