/** The uWS shell: the only part of Parley that touches uWebSockets.js. */
export { createHttpServer, type HttpServer, type HttpServerOptions, type RequestRecord } from './server.js';
export {
  defineRoute,
  type AnyRoute,
  type Authenticator,
  type HttpMethod,
  type Reply,
  type RequestContext,
  type RouteDefinition,
  type RouteMeta,
  type StreamSink,
} from './types.js';
export { reply, ndjsonLine, sseEvent } from './reply.js';
export type { ErrorBody } from './errors.js';
export { buildOpenApiDocument, type OpenApiOptions } from './openapi.js';
export type { AnySocketRoute, RealtimeSocket, SocketRoute, UpgradeRequest } from './socket-types.js';
export { fileReply, parseRange, type FileReplyOptions, type RangeRequest } from './file.js';
export { acceptsGzip, matchesEtag, staticAsset, staticAssetReply, type StaticAsset } from './static-asset.js';
export {
  findUnstorable,
  int32,
  isStorableDate,
  toStorableText,
  unstorableTextReason,
  PG_INT_MAX,
} from './validation.js';
