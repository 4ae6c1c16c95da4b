import type { Sql, TransactionSql } from '../db/index.js';
import type { PageCursor } from './pagination.js';

type Db = Sql | TransactionSql;

export interface AssistantRow {
  id: string;
  publicId: string;
  accountId: string;
  name: string;
  description: string | null;
  welcomeMessage: string | null;
  instructions: string | null;
  language: string;
  settings: unknown;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS =
  'id, public_id, account_id, name, description, welcome_message, instructions, language, settings, created_at, updated_at';

export async function insertAssistant(
  sql: Db,
  row: Omit<AssistantRow, 'createdAt' | 'updatedAt' | 'settings'> & { settings: Record<string, unknown> },
): Promise<AssistantRow> {
  const [created] = await sql<AssistantRow[]>`
    insert into assistants (id, public_id, account_id, name, description, welcome_message, instructions, language, settings)
    values (${row.id}, ${row.publicId}, ${row.accountId}, ${row.name}, ${row.description}, ${row.welcomeMessage},
            ${row.instructions}, ${row.language}, ${sql.json(row.settings as never)})
    returning ${sql.unsafe(COLUMNS)}`;
  return created!;
}

/** By public id only (keyless callers). */
export async function findByPublicId(sql: Db, publicId: string): Promise<AssistantRow | undefined> {
  const [row] = await sql<AssistantRow[]>`select ${sql.unsafe(COLUMNS)} from assistants where public_id = ${publicId}`;
  return row;
}

/** By either id, within one account (owner callers). */
export async function findOwned(
  sql: Db,
  accountId: string,
  key: { id?: string; publicId?: string },
): Promise<AssistantRow | undefined> {
  const [row] =
    key.publicId !== undefined
      ? await sql<
          AssistantRow[]
        >`select ${sql.unsafe(COLUMNS)} from assistants where public_id = ${key.publicId} and account_id = ${accountId}`
      : await sql<
          AssistantRow[]
        >`select ${sql.unsafe(COLUMNS)} from assistants where id = ${key.id ?? ''} and account_id = ${accountId}`;
  return row;
}

export async function findById(sql: Db, id: string): Promise<AssistantRow | undefined> {
  const [row] = await sql<AssistantRow[]>`select ${sql.unsafe(COLUMNS)} from assistants where id = ${id}`;
  return row;
}

export async function listPage(
  sql: Db,
  accountId: string,
  after: PageCursor | undefined,
  limit: number,
): Promise<AssistantRow[]> {
  return after
    ? sql<AssistantRow[]>`
        select ${sql.unsafe(COLUMNS)} from assistants
        where account_id = ${accountId} and (created_at, id) < (${after.createdAt}, ${after.id})
        order by created_at desc, id desc limit ${limit + 1}`
    : sql<AssistantRow[]>`
        select ${sql.unsafe(COLUMNS)} from assistants where account_id = ${accountId}
        order by created_at desc, id desc limit ${limit + 1}`;
}

export async function countForAccount(sql: Db, accountId: string): Promise<number> {
  const [row] = await sql<Array<{ n: number }>>`select count(*) as n from assistants where account_id = ${accountId}`;
  return row?.n ?? 0;
}

export async function updateAssistant(
  sql: Db,
  id: string,
  fields: {
    name: string;
    description: string | null;
    welcomeMessage: string | null;
    instructions: string | null;
    language: string;
    settings: Record<string, unknown>;
  },
): Promise<AssistantRow | undefined> {
  const [row] = await sql<AssistantRow[]>`
    update assistants set name = ${fields.name}, description = ${fields.description}, welcome_message = ${fields.welcomeMessage},
      instructions = ${fields.instructions}, language = ${fields.language}, settings = ${sql.json(fields.settings as never)}
    where id = ${id}
    returning ${sql.unsafe(COLUMNS)}`;
  return row;
}

/** Re-derives every chunk's search vector after the assistant's language changed. */
export async function reindexChunks(sql: Db, assistantId: string, language: string): Promise<void> {
  await sql`
    update document_chunks
    set tsv = setweight(to_tsvector(${language}::regconfig, coalesce(heading, '')), 'A')
           || setweight(to_tsvector(${language}::regconfig, content), 'B')
    where assistant_id = ${assistantId}`;
}

export async function deleteAssistant(sql: Db, id: string): Promise<boolean> {
  const rows = await sql`delete from assistants where id = ${id} returning id`;
  return rows.length > 0;
}
