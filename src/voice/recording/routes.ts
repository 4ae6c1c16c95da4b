import { z } from 'zod';
import { getOwnedAssistant } from '../../assistants/index.js';
import { ownerOf, type OwnerPrincipal } from '../../auth/index.js';
import type { Sql } from '../../db/index.js';
import { defineRoute, reply, type AnyRoute } from '../../http/index.js';
import { voiceErrors } from '../errors.js';
import * as q from '../queries.js';
import { SESSION_ID_PATTERN } from '../session/session-id.js';
import * as rq from './queries.js';
import type { VoiceRecordings } from './recordings.js';
import { SIGNATURE_PATTERN, type RecordingLinkSigner } from './signed-link.js';
import type { RecordingLinks } from './links.js';

const sessionId = z.string().regex(SESSION_ID_PATTERN, 'must be a voice session id (vs_...)');
const params = z.object({
  assistantId: z.string().min(1).max(100).describe('The public asst_ id or the internal id.'),
  sessionId,
});

const wavBody = z
  .unknown()
  .describe(
    "audio/wav: two channels (left: the caller, right: the assistant), in the call's format (PCM16, or G.711 μ-law / A-law).",
  );

const playbackErrors = {
  404: 'No such assistant, session or recording (not recorded, no consent, not finished, or its conversation was deleted).',
  416: 'The Range starts past the end.',
  503: 'The recordings store is not answering (DEPENDENCY_UNAVAILABLE, Retry-After).',
};

export interface RecordingRouteDeps {
  sql: Sql;
  recordings: VoiceRecordings;
  signer: RecordingLinkSigner;
  links: RecordingLinks;
  /** RECORDING_URL_TTL_SECONDS: the longest (and default) life of a signed link. */
  maxTtlSeconds: number;
}

/**
 * Playback of call recordings, all with Range (206 / 416) and never loaded whole:
 * - the dashboard's route (docs/design-decisions.md, dashboard-only routes): the owner's cookie session, an assistant
 *   of their account, a session of it recorded with consent that still belongs to a conversation;
 * - `GET /api/v1/conversations/{id}/recordings/{sessionId}/url`: a signed link that plays without credentials until
 *   it expires (`GET /api/v1/recordings/{sessionId}?expires=..&signature=..`), refused once expired (410) or
 *   altered (403), and 404 once the conversation is deleted.
 */
export function recordingRoutes(deps: RecordingRouteDeps): AnyRoute[] {
  const { sql, recordings } = deps;
  const play = async (id: string, range: string | undefined) => {
    const answer = await recordings.playback(id, range);
    if (answer === null) throw voiceErrors.recordingNotFound();
    return answer;
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/assistants/:assistantId/voice/recordings/:sessionId',
      auth: 'session',
      schemas: { params, response: { 200: wavBody, 206: wavBody } },
      openapi: {
        summary: 'Play back a voice call recording (Range requests supported)',
        hidden: true,
        contentTypes: { 200: 'audio/wav', 206: 'audio/wav' },
        errors: playbackErrors,
      },
      handler: async (ctx) => {
        const owner = ctx.principal as OwnerPrincipal;
        const assistant = await getOwnedAssistant(sql, owner, ctx.params.assistantId);
        const session = await q.findRecordedSession(sql, ctx.params.sessionId, assistant.id);
        if (session === undefined) throw voiceErrors.recordingNotFound();
        return play(session.id, ctx.headers['range']);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/conversations/:conversationId/recordings/:sessionId/url',
      auth: 'bearer',
      scope: 'conversations:read',
      schemas: {
        params: z.object({ conversationId: z.string().min(1).max(100), sessionId }),
        query: z.object({
          ttlSeconds: z.coerce
            .number()
            .int()
            .min(1)
            .max(deps.maxTtlSeconds)
            .optional()
            .describe(`How long the link works, in seconds (default and at most ${deps.maxTtlSeconds}).`),
        }),
        response: {
          200: z.object({
            url: z.string().describe('Plays the recording (audio/wav, Range supported) without credentials.'),
            expiresAt: z.string().describe('When the link stops working (ISO 8601).'),
          }),
        },
      },
      openapi: {
        summary: 'Get a signed, expiring link to a call recording',
        description:
          'A URL anyone holding it can play (a CRM, a player) until `expiresAt`; it is refused once expired (410 ' +
          'VOICE_RECORDING_LINK_EXPIRED) or altered (403 VOICE_RECORDING_LINK_INVALID), and stops working when the ' +
          'conversation is deleted.',
        tags: ['Conversations'],
        errors: { 404: 'No such conversation, or no recording of that call (VOICE_RECORDING_NOT_FOUND)' },
      },
      handler: async (ctx) => {
        const owner = ownerOf(ctx);
        const session = await rq.recordedSessionOfConversation(
          sql,
          owner.accountId,
          ctx.params.conversationId,
          ctx.params.sessionId,
        );
        if (session === undefined) throw voiceErrors.recordingNotFound();
        const ttl = ctx.query.ttlSeconds ?? deps.maxTtlSeconds;
        return reply.json(deps.links.linkOf(session.id, ttl, ctx.headers['host']));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/recordings/:sessionId',
      auth: 'none',
      schemas: {
        params: z.object({ sessionId }),
        query: z.object({
          expires: z.coerce.number().int().min(0).max(1e11).describe('Unix seconds the link expires at.'),
          signature: z.string().regex(SIGNATURE_PATTERN, 'must be a link signature').describe("The link's signature."),
        }),
        response: { 200: wavBody, 206: wavBody },
      },
      openapi: {
        summary: 'Play a call recording from a signed link (Range requests supported)',
        description:
          'Opened by the URL from GET /api/v1/conversations/{id}/recordings/{sessionId}/url; no credentials.',
        tags: ['Conversations'],
        contentTypes: { 200: 'audio/wav', 206: 'audio/wav' },
        errors: {
          403: 'The link was altered (VOICE_RECORDING_LINK_INVALID)',
          410: 'The link has expired (VOICE_RECORDING_LINK_EXPIRED)',
          ...playbackErrors,
        },
      },
      handler: async (ctx) => {
        const { expires, signature } = ctx.query;
        const verdict = deps.signer.verify(ctx.params.sessionId, expires, signature, Date.now());
        if (verdict === 'invalid') throw voiceErrors.recordingLinkInvalid();
        if (verdict === 'expired') throw voiceErrors.recordingLinkExpired();
        const session = await rq.linkedRecordedSession(sql, ctx.params.sessionId);
        if (session === undefined) throw voiceErrors.recordingNotFound();
        return play(session.id, ctx.headers['range']);
      },
    }),
  ];
}
