import { z } from 'zod';
import { getOwnedAssistant } from '../../assistants/index.js';
import type { OwnerPrincipal } from '../../auth/index.js';
import type { Sql } from '../../db/index.js';
import { defineRoute, fileReply, type AnyRoute } from '../../http/index.js';
import { voiceErrors } from '../errors.js';
import * as q from '../queries.js';
import { SESSION_ID_PATTERN } from '../session/session-id.js';
import type { VoiceRecordings } from './recordings.js';

const params = z.object({
  assistantId: z.string().min(1).max(100).describe('The public asst_ id or the internal id.'),
  sessionId: z.string().regex(SESSION_ID_PATTERN, 'must be a voice session id (vs_...)'),
});

const wavBody = z
  .unknown()
  .describe(
    "audio/wav: two channels (left: the caller, right: the assistant), in the call's format (PCM16, or G.711 μ-law / A-law).",
  );

/**
 * Dashboard-only playback of a call recording (docs/design-decisions.md, dashboard-only routes): the owner's cookie session,
 * an assistant of their account, a session of that assistant that was recorded with consent and still belongs to
 * a conversation. Served from disk in chunks with Range support (206 / 416), never loaded whole.
 */
export function recordingRoutes(deps: { sql: Sql; recordings: VoiceRecordings }): AnyRoute[] {
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
        errors: {
          404: 'No such assistant, session or recording (not recorded, no consent, not finished, or its conversation was deleted).',
          416: 'The Range starts past the end.',
        },
      },
      handler: async (ctx) => {
        const owner = ctx.principal as OwnerPrincipal;
        const assistant = await getOwnedAssistant(deps.sql, owner, ctx.params.assistantId);
        const session = await q.findRecordedSession(deps.sql, ctx.params.sessionId, assistant.id);
        if (session === undefined) throw voiceErrors.recordingNotFound();
        const answer = await fileReply(deps.recordings.pathOf(session.id), {
          contentType: 'audio/wav',
          range: ctx.headers['range'],
          headers: {
            'cache-control': 'private, no-store',
            'content-disposition': `inline; filename="${session.id}.wav"`,
          },
        });
        if (answer === null) throw voiceErrors.recordingNotFound();
        return answer;
      },
    }),
  ];
}
