import { z } from 'zod';
import { assistantSettingsPatchSchema, assistantSettingsSchema } from './settings.js';

export const assistantIdParam = z
  .string()
  .min(1)
  .max(100)
  .describe('The public asst_ id, or the internal id (bearer callers, own assistants only).');

export const assistantSchema = z
  .object({
    id: z.string().describe('Internal id.'),
    publicId: z.string().describe('Public asst_ id: a capability for keyless widget callers, not a secret.'),
    name: z.string(),
    description: z.string().nullable(),
    welcomeMessage: z.string().nullable(),
    instructions: z.string().nullable(),
    settings: assistantSettingsSchema,
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Assistant' });

const text = (max: number) => z.string().trim().max(max);

export const assistantCreateSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: text(2000).nullable().optional(),
    welcomeMessage: text(1000).nullable().optional(),
    instructions: text(8000).nullable().optional(),
    settings: assistantSettingsPatchSchema.optional(),
  })
  .strict();

export const assistantPatchSchema = assistantCreateSchema.partial().strict();
