import { z } from 'zod';
import { assistantIdParam } from '../assistants/index.js';

/** At most this many scenarios per assistant, turns and expectations per scenario, mocks per scenario. */
export const MAX_SCENARIOS = 100;
export const MAX_TURNS = 30;
export const MAX_EXPECT = 30;
export const MAX_MOCKS = 32;
/** Runs execute at most this many scenarios at once. */
export const MAX_CONCURRENCY = 10;

const text = (max: number) => z.string().trim().min(1).max(max);
const ms = (max: number) => z.number().int().min(0).max(max);

const phrase = text(500).describe(
  'A phrase matched case-insensitively on whole words (punctuation ignored), or a regular expression written /like this/i.',
);

export const turnSchema = z.union([
  z
    .object({
      say: text(1000).describe('What the simulated caller says (spoken with the local synthesizer on voice).'),
    })
    .strict(),
  z
    .object({
      press: z
        .string()
        .regex(/^[0-9*#]{1,32}$/, 'keypad digits 0-9, * and #')
        .describe('Keypad digits (phone only).'),
    })
    .strict(),
  z.object({ wait: ms(60_000).describe('Milliseconds of silence before the next turn.') }).strict(),
  z
    .object({
      interrupt: text(1000).describe('What the caller says over the answer of the previous turn.'),
      afterMs: ms(30_000).describe('Counted from the first audio of the answer it talks over.'),
    })
    .strict(),
]);

export const expectationSchema = z.union([
  z.object({ mustSay: phrase.describe('The assistant says this (in what it spoke, across the whole call).') }).strict(),
  z.object({ neverSay: phrase.describe('The assistant never says this.') }).strict(),
  z
    .object({
      toolCalled: z
        .object({
          name: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/),
          arguments: z
            .record(z.string(), z.unknown())
            .optional()
            .describe('A subset: every field given must equal the call argument of that name.'),
        })
        .strict(),
    })
    .strict(),
  z
    .object({
      endReason: text(64).describe('How the call ended (a voice end reason; `client` when the caller hung up).'),
    })
    .strict(),
  z
    .object({
      maxTurnLatencyMs: ms(120_000).describe(
        "Each turn's latency (end of the caller's speech to the answer's first audio; chat: to the first text) at most this.",
      ),
    })
    .strict(),
  z
    .object({ maxFirstAudioMs: ms(120_000).describe('Time to the first answer audio of the call at most this.') })
    .strict(),
  z
    .object({ stopsWithinMs: ms(10_000).describe('After an interrupt: the assistant stops speaking within this.') })
    .strict(),
  z
    .object({
      analysis: z
        .object({ field: text(100), equals: z.unknown() })
        .strict()
        .describe("A field of the conversation's post-call analysis equals this."),
    })
    .strict(),
]);

export const toolMockSchema = z
  .object({
    tool: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,63}$/)
      .describe("A tool's name; its calls are answered by `result`."),
    result: z.unknown().describe("Given to the assistant as the tool result, instead of calling the owner's server."),
  })
  .strict();

export const transportSchema = z
  .enum(['websocket', 'phone', 'chat'])
  .describe(
    'websocket: a voice call over the media WebSocket; phone: a simulated carrier call (μ-law media stream); chat: chat turns.',
  );

const fields = {
  name: text(100).describe('Unique per assistant.'),
  transport: transportSchema,
  turns: z.array(turnSchema).min(1).max(MAX_TURNS),
  expect: z.array(expectationSchema).min(1).max(MAX_EXPECT),
  toolMocks: z.array(toolMockSchema).max(MAX_MOCKS),
};

export const scenarioCreateSchema = z.object({ ...fields, toolMocks: fields.toolMocks.optional() }).strict();
export const scenarioPatchSchema = z.object(fields).partial().strict();

export type Turn = z.infer<typeof turnSchema>;
export type Expectation = z.infer<typeof expectationSchema>;
export type ToolMock = z.infer<typeof toolMockSchema>;
export type ScenarioTransport = z.infer<typeof transportSchema>;
export type ScenarioInput = z.infer<typeof scenarioCreateSchema>;
export type ScenarioPatch = z.infer<typeof scenarioPatchSchema>;

export const scenarioSchema = z.object({
  id: z.string(),
  assistantId: z.string().describe('Internal id of the assistant.'),
  name: z.string(),
  transport: transportSchema,
  turns: z.array(turnSchema),
  expect: z.array(expectationSchema),
  toolMocks: z.array(toolMockSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const scenarioParams = z.object({ assistantId: assistantIdParam });
export const oneScenarioParams = z.object({ assistantId: assistantIdParam, scenarioId: z.string().min(1).max(100) });
export const oneRunParams = z.object({ assistantId: assistantIdParam, runId: z.string().min(1).max(100) });

export const runCreateSchema = z
  .object({
    scenarios: z
      .array(z.string().min(1).max(100))
      .min(1)
      .max(MAX_SCENARIOS)
      .optional()
      .describe("Scenario ids or names; all of the assistant's scenarios when left out."),
    concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).default(3).describe('Scenarios run at once.'),
  })
  .strict();

const figuresSchema = z.object({
  passRate: z.number().nullable().describe('Passed results over finished results, 0..1.'),
  passed: z.number().int(),
  failed: z.number().int(),
  errored: z.number().int(),
  turnLatencyP50Ms: z.number().nullable(),
  turnLatencyP95Ms: z.number().nullable(),
  firstAudioP50Ms: z.number().nullable(),
  stopAfterInterruptP50Ms: z.number().nullable(),
});

export const runSchema = z.object({
  id: z.string(),
  assistantId: z.string(),
  status: z.enum(['running', 'done', 'failed']),
  concurrency: z.number().int(),
  scenarioCount: z.number().int(),
  completedCount: z.number().int(),
  figures: figuresSchema.nullable(),
  errorCode: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});

export const transcriptEntrySchema = z.object({
  role: z.enum(['caller', 'assistant', 'tool']),
  text: z.string(),
  atMs: z.number().describe('Since the start of the scenario.'),
  heard: z
    .string()
    .optional()
    .describe(
      "On voice: for a caller line, the words the assistant's recognizer heard; for an assistant line, the words the simulated caller's recognizer heard of its audio.",
    ),
  tool: z.object({ name: z.string(), arguments: z.unknown(), result: z.unknown(), mocked: z.boolean() }).optional(),
});

export const verdictSchema = z.object({
  expectation: expectationSchema,
  passed: z.boolean(),
  evidence: z.string().describe('What the judgement rests on: the words spoken, the figure measured.'),
});

export const resultSchema = z.object({
  index: z.number().int(),
  scenarioId: z.string().nullable(),
  name: z.string(),
  transport: transportSchema,
  status: z.enum(['pending', 'running', 'passed', 'failed', 'error']),
  conversationId: z.string().nullable(),
  transcript: z.array(transcriptEntrySchema),
  verdicts: z.array(verdictSchema),
  figures: z.object({
    turnLatenciesMs: z.array(z.number()).optional(),
    firstAudioMs: z.number().nullable().optional(),
    stopAfterInterruptMs: z.array(z.number()).optional(),
    endReason: z.string().nullable().optional(),
  }),
  error: z.string().nullable(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});

export type TranscriptEntry = z.infer<typeof transcriptEntrySchema>;
export type Verdict = z.infer<typeof verdictSchema>;
export type ResultFigures = z.infer<typeof resultSchema>['figures'];
export type RunFigures = z.infer<typeof figuresSchema>;
