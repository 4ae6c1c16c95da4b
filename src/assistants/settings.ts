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
});

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
});
export type AssistantSettings = z.output<typeof assistantSettingsSchema>;

/** What POST and PATCH accept: any subset; objects merge deeply, arrays replace. */
export const assistantSettingsPatchSchema = assistantSettingsSchema
  .extend({ voice: voiceSettingsSchema.partial() })
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
  }),
}) as AssistantSettings;

/** Deep merge of a patch onto settings (PATCH semantics: docs/design-decisions.md, Owner REST). */
export function mergeSettings(
  current: AssistantSettings,
  patch: AssistantSettingsPatch | undefined,
): AssistantSettings {
  if (!patch) return current;
  const { voice, ...rest } = patch;
  const defined = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  const voiceDefined = Object.fromEntries(Object.entries(voice ?? {}).filter(([, v]) => v !== undefined));
  return { ...current, ...defined, voice: { ...current.voice, ...voiceDefined } } as AssistantSettings;
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
  };
  const parsed = assistantSettingsSchema.safeParse(merged);
  return parsed.success ? parsed.data : DEFAULT_SETTINGS;
}
