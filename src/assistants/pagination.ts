import { z } from 'zod';
import { validationError } from '../errors/index.js';
import { isStorableDate, unstorableTextReason } from '../http/index.js';

/** A keyset position: the last row of a page, newest first (created_at desc, id desc). */
export interface PageCursor {
  createdAt: Date;
  id: string;
}

/** `limit` (1–100, default 20) and an opaque `cursor`, shared by every owner list route. */
export const pageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('Page size, at most 100.'),
  cursor: z.string().max(200).optional().describe('The nextCursor of the previous page.'),
});

export function encodeCursor(row: PageCursor): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id])).toString('base64url');
}

/** Decodes a cursor; a tampered or foreign cursor is a 400, not a silent first page. */
export function decodeCursor(cursor: string | undefined): PageCursor | undefined {
  if (cursor === undefined) return undefined;
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    const createdAt = new Date(String(at));
    if (typeof id !== 'string' || !isStorableDate(createdAt)) throw new Error('bad cursor');
    // The shell checks the raw cursor; what it decodes to is checked here (a NUL inside the base64).
    if (unstorableTextReason(id) !== undefined || id.length > 100) throw new Error('bad cursor');
    return { createdAt, id };
  } catch {
    throw validationError([{ path: 'query.cursor', message: 'not a cursor this API returned' }], 'query');
  }
}

/** Splits one extra fetched row off into the next cursor. */
export function pageOf<T extends PageCursor>(rows: T[], limit: number): { items: T[]; nextCursor: string | null } {
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  return { items, nextCursor: encodeCursor(items[items.length - 1]!) };
}
