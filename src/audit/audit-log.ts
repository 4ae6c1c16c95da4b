import { customAlphabet } from 'nanoid';
import { insertAuditRow, listAuditRows, type AuditRow, type Queryable } from './queries.js';

const idBody = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 20);

export interface AuditEntry {
  /** The signed-in operator; null for the operator CLI or the system itself. */
  actorUserId: string | null;
  /** Dotted verb, e.g. `account.updated`, `account.credit_granted`, `api_key.created`. */
  action: string;
  /** e.g. `account`, `hosting_account`, `api_key`, `user`. */
  targetType: string;
  targetId: string;
  /** The changed fields before and after (JSON). Never secrets. */
  before?: unknown;
  after?: unknown;
  requestId?: string;
}

/**
 * Writes one audit row. Every admin change calls this, with the same `sql` as the change itself (inside its
 * `sql.begin`), so a change and its record commit or roll back together. Returns the row id.
 */
export async function writeAuditLog(sql: Queryable, entry: AuditEntry): Promise<string> {
  const id = `aud_${idBody()}`;
  await insertAuditRow(sql, {
    id,
    actorUserId: entry.actorUserId,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    before: entry.before,
    after: entry.after,
    requestId: entry.requestId ?? null,
  });
  return id;
}

/** Newest first. */
export function readAuditLog(
  sql: Queryable,
  filter: { targetType?: string; targetId?: string; limit?: number; offset?: number } = {},
): Promise<AuditRow[]> {
  return listAuditRows(sql, { ...filter, limit: Math.min(filter.limit ?? 50, 500), offset: filter.offset ?? 0 });
}

export type { AuditRow };
