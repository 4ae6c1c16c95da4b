import { z } from 'zod';

/**
 * Text search configurations present both on PostgreSQL 15+ servers and in the embedded PGlite build, so
 * an assistant's language works the same on either database.
 */
export const SEARCH_LANGUAGES = [
  'simple',
  'arabic',
  'armenian',
  'basque',
  'catalan',
  'danish',
  'dutch',
  'english',
  'finnish',
  'french',
  'german',
  'greek',
  'hindi',
  'hungarian',
  'indonesian',
  'irish',
  'italian',
  'lithuanian',
  'nepali',
  'norwegian',
  'portuguese',
  'romanian',
  'russian',
  'serbian',
  'spanish',
  'swedish',
  'tamil',
  'turkish',
  'yiddish',
] as const;
export type SearchLanguage = (typeof SEARCH_LANGUAGES)[number];

/**
 * An allowed origin: `https://shop.example`, `http://localhost:5173`, or `https://*.example.com` (any
 * subdomain, not the apex). Stored lower-cased without a trailing slash.
 */
const ORIGIN = /^https?:\/\/(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;
export const allowedOriginSchema = z
  .string()
  .trim()
  .toLowerCase()
  .transform((v) => v.replace(/\/+$/, ''))
  .refine((v) => ORIGIN.test(v), {
    message: 'must be an origin such as https://shop.example or https://*.example.com',
  });

const rateLimit = z.number().int().min(1).max(100_000);

export const voiceSettingsSchema = z.object({
  enabled: z.boolean(),
  recording: z.enum(['off', 'on']),
  requireConsent: z.boolean(),
  maxDurationSeconds: z
    .number()
    .int()
    .min(30)
    .max(4 * 3600),
  idleTimeoutSeconds: z.number().int().min(10).max(3600),
  recordingRetentionDays: z
    .number()
    .int()
    .min(1)
    .max(3650)
    .nullable()
    .describe("Days a call's recording is kept, then deleted; null: as long as its conversation."),
  firstMessage: z
    .string()
    .trim()
    .max(500)
    .nullable()
    .describe('Said by the assistant as soon as the caller is connected; null: it waits for the caller to speak.'),
  voiceName: z
    .string()
    .regex(/^[A-Za-z0-9_+-]{1,40}$/, 'must be a voice name such as marin, en-us or en-gb+f3')
    .nullable()
    .describe(
      "The provider's voice (a hosted voice such as marin; the local voice: en-us, en-gb, en-us+f3, ...); null: its default.",
    ),
  speed: z.number().min(0.5).max(2).describe('How fast the local voice speaks (1 = normal).'),
  interruptAfterMs: z
    .number()
    .int()
    .min(20)
    .max(2000)
    .nullable()
    .describe(
      'How long the caller must speak to cut the assistant off (and start a turn); null: the provider default (60 ms).',
    ),
  endOfSpeechSilenceMs: z
    .number()
    .int()
    .min(200)
    .max(3000)
    .nullable()
    .describe("Silence that ends the caller's turn; null: the provider default (600 ms)."),
});

/** A structured-data field name: an identifier a CRM can map (`orderNumber`, `callback_requested`). */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** One field of the structured-data schema: a simple JSON Schema type, an enum, or both. */
const analysisFieldSchema = z
  .object({
    type: z.enum(['string', 'number', 'integer', 'boolean']).optional(),
    enum: z
      .array(z.union([z.string().min(1).max(200), z.number()]))
      .min(1)
      .max(50)
      .optional(),
    format: z.enum(['email', 'date', 'date-time']).optional().describe('For strings: what the value looks like.'),
    description: z.string().max(500).optional(),
  })
  .strict()
  .refine((f) => f.type !== undefined || f.enum !== undefined, { message: 'a field needs a type or an enum' })
  .refine((f) => f.format === undefined || f.type === 'string', { message: 'format applies to string fields only' });

/** A JSON Schema object of at most 20 simple fields: what structured data an analysis extracts. */
export const analysisSchemaSchema = z
  .object({
    type: z.literal('object'),
    properties: z
      .record(
        z.string().regex(FIELD_NAME, { message: 'field names are identifiers (letters, digits, _)' }),
        analysisFieldSchema,
      )
      .refine((p) => Object.keys(p).length >= 1 && Object.keys(p).length <= 20, {
        message: 'from 1 to 20 properties',
      }),
    required: z.array(z.string()).max(20).optional(),
    additionalProperties: z.literal(false).optional(),
    description: z.string().max(500).optional(),
  })
  .strict()
  .refine((s) => (s.required ?? []).every((name) => name in s.properties), {
    message: 'required names a property that is not defined',
    path: ['required'],
  });
export type AnalysisSchema = z.output<typeof analysisSchemaSchema>;

/** What is read from a conversation once it ends (docs/analysis.md). Every step is off by default. */
export const analysisSettingsSchema = z.object({
  summary: z.boolean().describe('A short summary of the conversation.'),
  structuredData: z
    .object({ schema: analysisSchemaSchema, instructions: z.string().max(2000).optional() })
    .strict()
    .nullable()
    .describe('Fields to fill from the conversation; null: none.'),
  successEvaluation: z
    .object({
      rubric: z.enum(['pass_fail', 'score_1_10', 'descriptive']),
      instructions: z.string().max(2000).optional(),
    })
    .strict()
    .nullable()
    .describe('Whether the conversation succeeded, by a rubric; null: not evaluated.'),
  sentiment: z.boolean().describe("The caller's sentiment: positive, neutral or negative."),
  timeoutMs: z.number().int().min(100).max(120_000).describe('Each step gives up after this long (its field: null).'),
  for: z
    .array(z.enum(['voice', 'chat']))
    .max(2)
    .describe('Which conversations are analysed: voice calls once settled, chats once idle.'),
  chatIdleMinutes: z
    .number()
    .int()
    .min(1)
    .max(1440)
    .describe('A chat counts as ended after this long without a message.'),
});
export type AnalysisSettings = z.output<typeof analysisSettingsSchema>;

export const DEFAULT_ANALYSIS: AnalysisSettings = Object.freeze({
  summary: false,
  structuredData: null,
  successEvaluation: null,
  sentiment: false,
  timeoutMs: 10_000,
  for: ['voice', 'chat'],
  chatIdleMinutes: 30,
}) as AnalysisSettings;

/** Built-in tools an owner can switch on (docs/tools.md, built-in tools). */
export const BUILTIN_TOOLS = ['end_call', 'transfer_call', 'send_dtmf'] as const;

/** The stored, complete settings (defaults filled in). */
export const assistantSettingsSchema = z.object({
  allowedDomains: z
    .array(allowedOriginSchema)
    .max(100)
    .describe('Origins allowed to call keyless routes; empty means no keyless access.'),
  visitorRateLimitPerMinute: rateLimit
    .nullable()
    .describe('Per-visitor widget requests per minute; null uses the deployment default.'),
  assistantRateLimitPerMinute: rateLimit
    .nullable()
    .describe('Widget requests per minute for the whole assistant; null uses the deployment default.'),
  requireWidgetSigning: z
    .boolean()
    .describe('Keyless chat and feedback need an X-Parley-Signature for the visitor id.'),
  language: z
    .enum(SEARCH_LANGUAGES)
    .describe("Text search language of this assistant's knowledge (stemming and stop words)."),
  chatProvider: z
    .enum(['default', 'local', 'openai'])
    .describe("Chat provider; default uses the deployment's CHAT_PROVIDER."),
  voice: voiceSettingsSchema,
  analysis: analysisSettingsSchema,
  builtins: z
    .array(z.enum(BUILTIN_TOOLS))
    .max(BUILTIN_TOOLS.length)
    .describe(
      'Built-in tools the assistant may use in voice calls: end_call (it ends the call); transfer_call and send_dtmf ' +
        'are offered on phone calls only.',
    ),
});
export type AssistantSettings = z.output<typeof assistantSettingsSchema>;

/** What POST and PATCH accept: any subset; objects merge deeply, arrays replace. */
export const assistantSettingsPatchSchema = assistantSettingsSchema
  .extend({ voice: voiceSettingsSchema.partial(), analysis: analysisSettingsSchema.partial().strict() })
  .partial()
  .strict();
export type AssistantSettingsPatch = z.output<typeof assistantSettingsPatchSchema>;

export const DEFAULT_SETTINGS: AssistantSettings = Object.freeze({
  allowedDomains: [],
  visitorRateLimitPerMinute: null,
  assistantRateLimitPerMinute: null,
  requireWidgetSigning: false,
  language: 'english',
  chatProvider: 'default',
  voice: Object.freeze({
    enabled: false,
    recording: 'off',
    requireConsent: true,
    maxDurationSeconds: 900,
    idleTimeoutSeconds: 120,
    recordingRetentionDays: null,
    firstMessage: null,
    voiceName: null,
    speed: 1,
    interruptAfterMs: null,
    endOfSpeechSilenceMs: null,
  }),
  analysis: DEFAULT_ANALYSIS,
  builtins: [],
}) as AssistantSettings;

/** Deep merge of a patch onto settings (PATCH semantics: docs/design-decisions.md, Owner REST). */
export function mergeSettings(
  current: AssistantSettings,
  patch: AssistantSettingsPatch | undefined,
): AssistantSettings {
  if (!patch) return current;
  const { voice, analysis, ...rest } = patch;
  const defined = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  const voiceDefined = Object.fromEntries(Object.entries(voice ?? {}).filter(([, v]) => v !== undefined));
  const analysisDefined = Object.fromEntries(Object.entries(analysis ?? {}).filter(([, v]) => v !== undefined));
  return {
    ...current,
    ...defined,
    voice: { ...current.voice, ...voiceDefined },
    analysis: { ...current.analysis, ...analysisDefined },
  } as AssistantSettings;
}

/**
 * Settings read from the database, completed with today's defaults: a field added in a later release
 * reads as its default for assistants stored before it.
 */
export function normalizeStoredSettings(stored: unknown): AssistantSettings {
  const value = (stored && typeof stored === 'object' ? stored : {}) as Record<string, unknown>;
  const merged = {
    ...DEFAULT_SETTINGS,
    ...value,
    voice: { ...DEFAULT_SETTINGS.voice, ...((value['voice'] as object | undefined) ?? {}) },
    analysis: { ...DEFAULT_SETTINGS.analysis, ...((value['analysis'] as object | undefined) ?? {}) },
  };
  const parsed = assistantSettingsSchema.safeParse(merged);
  return parsed.success ? parsed.data : DEFAULT_SETTINGS;
}
