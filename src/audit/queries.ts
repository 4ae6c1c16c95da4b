import type postgres from 'postgres';

/** A client or a transaction (the audit row belongs in the same transaction as the change it records). */
export type Queryable = postgres.ISql<Record<string, never>>;

export interface AuditRow {
  id: string;
  actorUserId: string | null;
  action: string;
  targetType: string;
  targetId: string;
  before: unknown;
  after: unknown;
  requestId: string | null;
  createdAt: Date;
}

export async function insertAuditRow(
  sql: Queryable,
  row: {
    id: string;
    actorUserId: string | null;
    action: string;
    targetType: string;
    targetId: string;
    before: unknown;
    after: unknown;
    requestId: string | null;
  },
): Promise<void> {
  await sql`
    insert into audit_log (id, actor_user_id, action, target_type, target_id, before, after, request_id)
    values (${row.id}, ${row.actorUserId}, ${row.action}, ${row.targetType}, ${row.targetId},
            ${row.before === undefined ? null : sql.json(row.before as postgres.JSONValue)},
            ${row.after === undefined ? null : sql.json(row.after as postgres.JSONValue)},
            ${row.requestId})`;
}

export async function listAuditRows(
  sql: Queryable,
  filter: { targetType?: string; targetId?: string; limit: number; offset: number },
): Promise<AuditRow[]> {
  return sql<AuditRow[]>`
    select id, actor_user_id, action, target_type, target_id, before, after, request_id, created_at
    from audit_log
    where (${filter.targetType ?? null}::text is null or target_type = ${filter.targetType ?? null})
      and (${filter.targetId ?? null}::text is null or target_id = ${filter.targetId ?? null})
    order by created_at desc, id desc
    limit ${filter.limit} offset ${filter.offset}`;
}
