import { z } from 'zod';
import { assistantIdParam } from '../assistants/index.js';

/** At most this many tools per assistant (each one is offered to the model on every turn). */
export const MAX_TOOLS = 32;

const text = (max: number) => z.string().trim().min(1).max(max);

export const toolNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be snake_case: a lowercase letter, then lowercase letters, digits or _')
  .describe('snake_case, unique per assistant (the model calls the tool by it).');

export const toolMessagesSchema = z
  .object({
    start: text(300).optional().describe('Said (voice) or shown when the tool starts.'),
    delayed: z
      .array(z.object({ afterMs: z.number().int().min(0).max(60_000), text: text(300) }).strict())
      .max(5)
      .optional()
      .describe('Said while a slow tool runs, each at its time after the start.'),
    failed: text(300).optional().describe('Said when the tool fails or times out.'),
  })
  .strict();

const parametersSchema = z
  .record(z.string(), z.unknown())
  .describe(
    'JSON Schema of the arguments: type object with properties of type string (enum, format email | date | date-time, ' +
      'minLength, maxLength), number and integer (enum, minimum, maximum), boolean, object, array (items, minItems, ' +
      'maxItems); required; additionalProperties (default false); description anywhere. Other keywords are refused.',
  );

const fields = {
  name: toolNameSchema,
  description: text(1000).describe('What the tool does and when to use it (the model reads it).'),
  parameters: parametersSchema,
  url: z.string().min(1).max(2048).describe('Where calls are POSTed: https, not a private, local or reserved address.'),
  timeoutMs: z.number().int().min(1000).max(60_000).describe('How long a call may take (default 10,000).'),
  mode: z.enum(['sync', 'async']).describe('sync: the answer waits for the result; async: told "started" at once.'),
  messages: toolMessagesSchema,
  examples: z
    .array(text(200))
    .max(20)
    .describe('Phrases that call the tool without a model, with slots naming parameters: "status of order {orderId}".'),
};

export const toolCreateSchema = z
  .object({
    ...fields,
    timeoutMs: fields.timeoutMs.default(10_000),
    mode: fields.mode.default('sync'),
    messages: fields.messages.optional(),
    examples: fields.examples.optional(),
  })
  .strict();

export const toolPatchSchema = z.object(fields).partial().strict();

export const toolSchema = z
  .object({
    id: z.string(),
    assistantId: z.string().describe('Internal id of the assistant.'),
    name: z.string(),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    url: z.string(),
    timeoutMs: z.number().int(),
    mode: z.enum(['sync', 'async']),
    messages: toolMessagesSchema,
    examples: z.array(z.string()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Tool' });

export const toolTestSchema = z
  .object({
    arguments: z
      .record(z.string(), z.unknown())
      .describe("The sample call's arguments, checked against the tool's parameters before anything is sent."),
  })
  .strict();

export const toolTestResultSchema = z.object({
  ok: z.boolean().describe('The server answered 2xx JSON with a result.'),
  status: z.enum(['succeeded', 'failed']),
  result: z.unknown().optional().describe("The server's result (JSON), when it succeeded."),
  error: z
    .string()
    .optional()
    .describe('Why it failed: no answer in time, an HTTP status, an error it reported, an address refused...'),
  ms: z.number().int().describe("The server's time (ms)."),
  toolCallId: z.string().describe("The request's webhook-id (tcall_...)."),
});

export const toolSecretSchema = z
  .string()
  .describe('whsec_ + base64 signing key (Standard Webhooks). Shown only in this answer: store it now.');

export const toolParams = z.object({ assistantId: assistantIdParam });
export const oneToolParams = z.object({
  assistantId: assistantIdParam,
  toolId: z
    .string()
    .regex(/^tool_[0-9A-Za-z]{1,64}$/, 'not a tool id')
    .describe('A tool id (tool_...).'),
});
