import { z } from 'zod';
import { AppError, HttpErrorCodes, type ValidationIssue } from '../errors/index.js';

/** What a 400 VALIDATION_FAILED carries: every bad field and why. */
export const validationDetailsSchema = z
  .object({
    issues: z.array(
      z
        .object({
          path: z
            .string()
            .describe('The field, dotted from the request part: body.scopes, body.pairs.0.answer, query.limit.'),
          message: z
            .string()
            .describe('Why, as a phrase after the field name: "is required", "choose at least one scope".'),
        })
        .meta({ id: 'ValidationIssue' }),
    ),
  })
  .meta({ id: 'ValidationDetails' });

/** The one error body (docs/api.md, Errors). */
export const errorBodySchema = z.object({
  error: z.string().describe('A human sentence.'),
  code: z.string().describe('Stable, documented code, e.g. VALIDATION_FAILED.'),
  reason: z.string().optional().describe('Present only where the contract names a reason (voice_unavailable, ...).'),
  details: z
    .union([validationDetailsSchema, z.record(z.string(), z.unknown())])
    .optional()
    .describe('VALIDATION_FAILED: `{issues}`, one per bad field. Other codes: safe facts about the refusal (limits).'),
  requestId: z.string(),
});

export type ErrorBody = z.output<typeof errorBodySchema>;

export function errorBody(err: AppError, requestId: string): ErrorBody {
  const body: ErrorBody = { error: err.message, code: err.code, requestId };
  if (err.reason !== undefined) body.reason = err.reason;
  if (err.details !== undefined) body.details = err.details as ErrorBody['details'];
  return body;
}

export function internalError(): AppError {
  return new AppError(
    HttpErrorCodes.INTERNAL,
    500,
    'Something went wrong on our side. Quote the request id if you report it.',
  );
}

/** A list as a reader says it: "a, b or c". */
function orList(values: readonly unknown[]): string {
  const shown = values.map((v) => JSON.stringify(v));
  return shown.length <= 1 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}`;
}

const UNIT: Record<string, [string, string]> = {
  string: ['character', 'characters'],
  array: ['item', 'items'],
  set: ['item', 'items'],
  file: ['byte', 'bytes'],
};

/**
 * Messages for the issues a schema does not word itself, as a phrase that follows the field's name ("name: is
 * required", "scopes: must have at least 1 item"): the dashboard shows them beside the field, API callers read them
 * in `details.issues`. A message a schema sets itself wins.
 */
export const fieldMessages: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `must be ${issue.expected === 'array' ? 'a list' : issue.expected === 'object' ? 'an object' : `a ${issue.expected}`}`;
    case 'too_small': {
      const [one, many] = UNIT[issue.origin] ?? ['', ''];
      const n = Number(issue.minimum);
      if (one === '') return `must be ${issue.inclusive === false ? 'more than' : 'at least'} ${n}`;
      if (issue.origin === 'string' && n === 1) return 'must not be empty';
      if (issue.origin === 'array' && n === 1) return 'must have at least one item';
      return `must have at least ${n} ${n === 1 ? one : many}`;
    }
    case 'too_big': {
      const [one, many] = UNIT[issue.origin] ?? ['', ''];
      const n = Number(issue.maximum);
      if (one === '') return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${n}`;
      return `must have at most ${n} ${n === 1 ? one : many}`;
    }
    case 'invalid_value':
      return `must be ${issue.values.length === 1 ? orList(issue.values) : `one of ${orList(issue.values)}`}`;
    case 'invalid_format':
      return issue.format === 'regex' ? 'is not in the expected format' : `must be a valid ${issue.format}`;
    case 'invalid_union':
      return 'does not match any accepted form';
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'invalid_key':
      return 'has a key that is not allowed';
    default:
      return undefined;
  }
};

/** Parses with {@link fieldMessages} as the wording of issues the schema leaves unworded. */
export function safeParseWithFieldMessages<T extends z.ZodType>(schema: T, value: unknown) {
  return schema.safeParse(value, { error: fieldMessages });
}

/** One issue per bad field: its dotted path from the request part (`body.scopes`) and why, in words. */
export function zodIssues(error: z.ZodError, prefix: string): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const pathOf = (segments: readonly PropertyKey[]) =>
    [prefix, ...segments.map(String)].filter((s) => s.length > 0).join('.');
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      // Named one by one, each at its own path, so a form can mark the very field.
      for (const key of issue.keys) out.push({ path: pathOf([...issue.path, key]), message: 'is not a known field' });
      continue;
    }
    out.push({ path: pathOf(issue.path), message: issue.message });
  }
  return out;
}
