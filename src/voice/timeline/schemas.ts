import { z } from 'zod';

const ownerSchema = z.enum(['caller', 'relay', 'provider', 'platform', 'owner']).meta({ id: 'VoiceTimelineOwner' });

export const timelineEventSchema = z
  .object({
    atMs: z.number().int().describe('Milliseconds since the mint; events are ordered and never go back in time.'),
    type: z
      .string()
      .describe(
        'minted, caller_connected, caller_disconnected, provider_connected, provider_reconnecting, provider_reconnected, provider_lost, provider_closed, gate_opened, gate_closed, degraded, recovered, turn_started, first_audio, ended, settled, and the transport’s own (mute, unmute, replaced, audio_dropped, frame_refused; the phone and WebRTC transports add theirs).',
      ),
    detail: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .optional()
      .describe('Small flat values (reason, cause, turn, latencyMs, counts); never transcripts or audio.'),
  })
  .meta({ id: 'VoiceTimelineEvent' });

export const timelineTurnSchema = z
  .object({
    index: z.number().int().describe('1 for the call’s first turn.'),
    userStoppedAtMs: z
      .number()
      .describe('When Parley read the audio that ends the caller’s speech (ms since the mint).'),
    firstAudioAtMs: z
      .number()
      .describe('When Parley wrote the answer’s first audio to the caller (ms since the mint).'),
    latencyMs: z.number().describe('firstAudioAtMs - userStoppedAtMs: the silence the caller waited through.'),
    parts: z
      .array(z.object({ name: z.string(), ms: z.number(), owner: ownerSchema }))
      .describe(
        'In order, adding up to latencyMs: caller_audio_held (relay: audio gathered behind an undrained provider write before the provider had it), provider_first_audio (provider), grounding (platform: Parley answering a question the model delegated), gate (relay: answer audio withheld by the gate otherwise), answer_audio_held (relay: before it was written to the caller).',
      ),
  })
  .meta({ id: 'VoiceTimelineTurn' });

export const timelineEndSchema = z
  .object({
    reason: z
      .string()
      .nullable()
      .describe('The end reason as the conversation and an owner’s end route give it; null: the caller hung up.'),
    endedBy: z.enum(['client', 'service', 'reaper']).nullable(),
    fault: z
      .enum(['caller', 'assistant', 'provider', 'platform', 'budget'])
      .nullable()
      .describe('Whose doing the end was; null for a normal hang-up.'),
    billableSeconds: z.number().int(),
    costMicros: z.number().int().describe('What the call cost (its settled usage events), in micro-dollars.'),
  })
  .meta({ id: 'VoiceTimelineEnd' });

export const timelineSchema = z
  .object({
    sessionId: z.string(),
    conversationId: z.string().nullable(),
    assistantId: z.string(),
    source: z.string(),
    transport: z.string().describe('How the caller connected (websocket, or a phone or WebRTC transport).'),
    state: z.enum(['active', 'ended', 'lost']),
    startedAt: z.string().describe('The mint (ISO 8601): atMs counts from here.'),
    endedAt: z.string().nullable(),
    events: z.array(timelineEventSchema),
    eventsOmitted: z
      .object({
        count: z.number().int(),
        fromMs: z.number().int(),
        toMs: z.number().int(),
        byType: z.record(z.string(), z.number().int()),
      })
      .nullable()
      .describe('A long call keeps its first and last events; the ones between are counted here by type.'),
    turns: z.array(timelineTurnSchema),
    turnsOmitted: z.number().int().describe('Turns of a long call’s middle left out (the first and last are kept).'),
    summary: z.object({
      turns: z.number().int().describe('Turns listed.'),
      latencyP50Ms: z.number().nullable(),
      latencyP95Ms: z.number().nullable(),
    }),
    end: timelineEndSchema.nullable().describe('Null while the call runs.'),
  })
  .meta({ id: 'VoiceTimeline' });

export const latencyQuerySchema = z.object({
  days: z.coerce.number().int().min(1).max(31).default(7).describe('Days back from today (UTC), today included.'),
});

export const latencyResponseSchema = z
  .object({
    assistantId: z.string(),
    days: z.array(
      z.object({
        day: z.string().describe('YYYY-MM-DD (UTC).'),
        turns: z.number().int(),
        latencyP50Ms: z.number(),
        latencyP95Ms: z.number(),
        firstAudioP50Ms: z.number(),
        firstAudioP95Ms: z.number(),
      }),
    ),
  })
  .meta({ id: 'VoiceLatency' });
