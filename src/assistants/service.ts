import type { OwnerPrincipal } from '../auth/principal.js';
import type { Sql } from '../db/index.js';
import { assertCanCreateAssistant, type Meter } from '../metering/index.js';
import { lockAssistantTerms, rebuildAssistantTerms } from '../retrieval/index.js';
import { assistantErrors } from './errors.js';
import { isInternalAssistantId, isPublicAssistantId, newInternalAssistantId, newKnowledgeId } from './ids.js';
import { decodeCursor, pageOf } from './pagination.js';
import * as q from './queries.js';
import {
  DEFAULT_SETTINGS,
  mergeSettings,
  normalizeStoredSettings,
  type AssistantSettings,
  type AssistantSettingsPatch,
} from './settings.js';

/** The assistant as every capability sees it (settings complete, defaults filled in). */
export interface Assistant extends Omit<q.AssistantRow, 'language' | 'settings'> {
  settings: AssistantSettings;
}

export interface AssistantInput {
  name: string;
  description?: string | null | undefined;
  welcomeMessage?: string | null | undefined;
  instructions?: string | null | undefined;
  settings?: AssistantSettingsPatch | undefined;
}

export type AssistantPatch = Partial<AssistantInput>;

function toAssistant(row: q.AssistantRow): Assistant {
  return {
    id: row.id,
    publicId: row.publicId,
    accountId: row.accountId,
    name: row.name,
    description: row.description,
    welcomeMessage: row.welcomeMessage,
    instructions: row.instructions,
    settings: normalizeStoredSettings(row.settings),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** The public shape (no account id). */
export function presentAssistant(a: Assistant) {
  return {
    id: a.id,
    publicId: a.publicId,
    name: a.name,
    description: a.description,
    welcomeMessage: a.welcomeMessage,
    instructions: a.instructions,
    settings: a.settings,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

/**
 * An assistant the owner may act on, by public asst_ id or internal id. Another account's assistant and
 * a malformed id are the same 404 (never 403: existence is not disclosed).
 */
export async function getOwnedAssistant(
  sql: Sql,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  assistantId: string,
): Promise<Assistant> {
  let row: q.AssistantRow | undefined;
  if (isPublicAssistantId(assistantId)) row = await q.findOwned(sql, owner.accountId, { publicId: assistantId });
  else if (isInternalAssistantId(assistantId)) row = await q.findOwned(sql, owner.accountId, { id: assistantId });
  if (!row) throw assistantErrors.notFound();
  return toAssistant(row);
}

/** Keyless callers: the public asst_ id only (docs/api.md, Authentication). */
export async function getAssistantByPublicId(sql: Sql, publicId: string): Promise<Assistant> {
  const row = isPublicAssistantId(publicId) ? await q.findByPublicId(sql, publicId) : undefined;
  if (!row) throw assistantErrors.notFound();
  return toAssistant(row);
}

/** Internal lookup by internal id (workers, other capabilities after they resolved ownership). */
export async function getAssistantById(sql: Sql, id: string): Promise<Assistant | undefined> {
  const row = isInternalAssistantId(id) ? await q.findById(sql, id) : undefined;
  return row ? toAssistant(row) : undefined;
}

export async function listAssistants(
  sql: Sql,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  page: { limit: number; cursor?: string | undefined },
) {
  const rows = await q.listPage(sql, owner.accountId, decodeCursor(page.cursor), page.limit);
  const { items, nextCursor } = pageOf(rows, page.limit);
  return { assistants: items.map(toAssistant), nextCursor };
}

/**
 * Creates an assistant. With `limits.meter` (the POST route always passes it) the plan's assistant cap is checked
 * in the same transaction as the insert: assertCanCreateAssistant row-locks the hosting account, so two concurrent
 * creations at the last free slot serialise and the second sees the first's row (enforce mode: 403 `plan_limit`;
 * shadow and off never refuse). Without `limits` (internal seeding, tests) no cap applies.
 */
export async function createAssistant(
  sql: Sql,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  input: AssistantInput,
  limits?: { meter: Meter },
): Promise<Assistant> {
  const settings = mergeSettings(DEFAULT_SETTINGS, input.settings);
  const row = await sql.begin(async (tx) => {
    if (limits) await assertCanCreateAssistant(limits.meter, tx, owner.accountId, 'owner');
    return q.insertAssistant(tx, {
      id: newInternalAssistantId(),
      publicId: newKnowledgeId('asst'),
      accountId: owner.accountId,
      name: input.name,
      description: input.description ?? null,
      welcomeMessage: input.welcomeMessage ?? null,
      instructions: input.instructions ?? null,
      language: settings.language,
      settings,
    });
  });
  return toAssistant(row);
}

/** PATCH: given fields replace, settings merge deeply. A language change re-derives the search vectors. */
export async function updateAssistant(
  sql: Sql,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  assistantId: string,
  patch: AssistantPatch,
): Promise<Assistant> {
  return sql.begin(async (tx) => {
    const current = await getOwnedAssistant(tx as unknown as Sql, owner, assistantId);
    const settings = mergeSettings(current.settings, patch.settings);
    const row = await q.updateAssistant(tx, current.id, {
      name: patch.name ?? current.name,
      description: patch.description !== undefined ? patch.description : current.description,
      welcomeMessage: patch.welcomeMessage !== undefined ? patch.welcomeMessage : current.welcomeMessage,
      instructions: patch.instructions !== undefined ? patch.instructions : current.instructions,
      language: settings.language,
      settings,
    });
    if (!row) throw assistantErrors.notFound();
    if (settings.language !== current.settings.language) {
      await lockAssistantTerms(tx, current.id);
      await q.reindexChunks(tx, current.id, settings.language);
      await rebuildAssistantTerms(tx, current.id);
    }
    return toAssistant(row);
  });
}

/** Deletes the assistant with its documents, chunks, jobs and conversations (foreign keys cascade). */
export async function deleteAssistant(
  sql: Sql,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  assistantId: string,
): Promise<void> {
  const current = await getOwnedAssistant(sql, owner, assistantId);
  if (!(await q.deleteAssistant(sql, current.id))) throw assistantErrors.notFound();
}
