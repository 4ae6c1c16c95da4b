import { z } from 'zod';

export const variablesSchema = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'variable names are letters, digits and _'),
    z.string().max(500),
  )
  .refine((v) => Object.keys(v).length <= 50, 'at most 50 variables')
  .describe('Values for {{name}} placeholders of the call (e.g. the contact\u2019s name).');
