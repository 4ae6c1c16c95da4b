import { lookup as dnsLookup } from 'node:dns/promises';
import { customAlphabet } from 'nanoid';
import { getOwnedAssistant } from '../assistants/index.js';
import type { OwnerPrincipal } from '../auth/index.js';
import type { Sql } from '../db/index.js';
import {
  GuardedFetchError,
  parseFetchableUrl,
  resolveAllowed,
  type AddressPolicy,
  type LookupAll,
} from '../documents/index.js';
import { validationError, type ValidationIssue } from '../errors/index.js';
import { newEndpointSecret, type SecretBox } from '../webhooks/index.js';
import { slotsOf } from '../providers/chat/index.js';
import { toolErrors } from './errors.js';
import { callTool, type ToolOutcome } from './caller.js';
import { argumentIssues, schemaIssues } from './json-schema.js';
import * as q from './queries.js';
import { MAX_TOOLS } from './schemas.js';

type Owner = Pick<OwnerPrincipal, 'accountId'>;

export interface ToolServiceDeps {
  sql: Sql;
  secrets: SecretBox;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: plain http and any address allowed (local development). */
  allowPrivate: boolean;
  policy: AddressPolicy;
  lookup?: LookupAll | undefined;
}

/** After a rotation the previous secret keeps signing beside the new one this long. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

const idBody = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 20);
const newToolId = () => `tool_${idBody()}`;
/** A tool call's id: the `webhook-id` of its request, so the owner's server can deduplicate on it. */
export const newToolCallId = () => `tcall_${idBody()}`;

export function presentTool(row: q.ToolRow) {
  return {
    id: row.id,
    assistantId: row.assistantId,
    name: row.name,
    description: row.description,
    parameters: row.parameters,
    url: row.url,
    timeoutMs: row.timeoutMs,
    mode: row.mode,
    messages: row.messages,
    examples: row.examples,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const BLOCKED = 'The URL points to a private, local or reserved network address, which is not allowed.';

/**
 * The webhook address policy, for tools: https only (plain http and private addresses only with
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS=true), no credentials, no literal or resolved private address. A name that does not
 * resolve yet is accepted: every call resolves and checks it again and pins the connection to the checked address.
 */
async function checkUrl(deps: ToolServiceDeps, raw: string): Promise<string> {
  let url: URL;
  try {
    url = parseFetchableUrl(raw);
  } catch (err) {
    throw toolErrors.urlNotAllowed(err instanceof GuardedFetchError ? err.message : 'The URL is not valid.');
  }
  if (deps.allowPrivate) return url.toString();
  if (url.protocol !== 'https:') throw toolErrors.urlNotAllowed('A tool URL must be https.');
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) throw toolErrors.urlNotAllowed(BLOCKED);
  try {
    await resolveAllowed(url, deps.policy, deps.lookup ?? ((h) => dnsLookup(h, { all: true, verbatim: true })));
  } catch (err) {
    if (err instanceof GuardedFetchError && err.failure === 'blocked_address') throw toolErrors.urlNotAllowed(BLOCKED);
  }
  return url.toString();
}

/** The schema subset, and every example slot naming a parameter. */
function checkDefinition(fields: q.ToolFields): void {
  const issues: ValidationIssue[] = schemaIssues(fields.parameters);
  const properties = Object.keys((fields.parameters['properties'] ?? {}) as object);
  fields.examples.forEach((example, i) => {
    for (const slot of slotsOf(example))
      if (!properties.includes(slot))
        issues.push({ path: `body.examples.${i}`, message: `names {${slot}}, which is not a parameter` });
  });
  if (issues.length > 0) throw validationError(issues, 'body');
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23505';
}

export interface ToolInput {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  url: string;
  timeoutMs: number;
  mode: 'sync' | 'async';
  messages?: q.ToolMessages | undefined;
  examples?: string[] | undefined;
}

/**
 * Adds a tool. The assistant's row lock serialises creations, so the 32-tool cap and the name check hold under
 * concurrency. The first tool also makes the assistant's signing secret: answered here, once.
 */
export async function createTool(deps: ToolServiceDeps, owner: Owner, assistantId: string, input: ToolInput) {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  const fields: q.ToolFields = {
    name: input.name,
    description: input.description,
    parameters: input.parameters,
    url: await checkUrl(deps, input.url),
    timeoutMs: input.timeoutMs,
    mode: input.mode,
    messages: input.messages ?? {},
    examples: input.examples ?? [],
  };
  checkDefinition(fields);
  try {
    return await deps.sql.begin(async (tx) => {
      await q.lockAssistant(tx, assistant.id);
      if ((await q.countTools(tx, assistant.id)) >= MAX_TOOLS) throw toolErrors.limit(MAX_TOOLS);
      if (await q.findByName(tx, assistant.id, fields.name)) throw toolErrors.nameTaken();
      const row = await q.insertTool(tx, newToolId(), assistant.id, fields);
      const secret = newEndpointSecret();
      const made = await q.insertSecret(tx, assistant.id, deps.secrets.seal(secret, assistant.id));
      return { tool: presentTool(row), ...(made ? { secret } : {}) };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw toolErrors.nameTaken();
    throw err;
  }
}

export async function listTools(deps: ToolServiceDeps, owner: Owner, assistantId: string) {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  return (await q.listTools(deps.sql, assistant.id)).map(presentTool);
}

async function ownedTool(deps: ToolServiceDeps, owner: Owner, assistantId: string, toolId: string) {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  const row = await q.findTool(deps.sql, assistant.id, toolId);
  if (!row) throw toolErrors.notFound();
  return row;
}

export async function getTool(deps: ToolServiceDeps, owner: Owner, assistantId: string, toolId: string) {
  return presentTool(await ownedTool(deps, owner, assistantId, toolId));
}

/** PATCH: given fields replace (messages and examples as a whole); the result is checked like a new tool. */
export async function updateTool(
  deps: ToolServiceDeps,
  owner: Owner,
  assistantId: string,
  toolId: string,
  patch: Partial<ToolInput>,
) {
  const current = await ownedTool(deps, owner, assistantId, toolId);
  const fields: q.ToolFields = {
    name: patch.name ?? current.name,
    description: patch.description ?? current.description,
    parameters: patch.parameters ?? current.parameters,
    url: patch.url !== undefined ? await checkUrl(deps, patch.url) : current.url,
    timeoutMs: patch.timeoutMs ?? current.timeoutMs,
    mode: patch.mode ?? current.mode,
    messages: patch.messages ?? current.messages,
    examples: patch.examples ?? current.examples,
  };
  checkDefinition(fields);
  try {
    const row = await q.updateTool(deps.sql, current.id, fields);
    if (!row) throw toolErrors.notFound();
    return presentTool(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw toolErrors.nameTaken();
    throw err;
  }
}

export async function deleteTool(deps: ToolServiceDeps, owner: Owner, assistantId: string, toolId: string) {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  if (!(await q.deleteTool(deps.sql, assistant.id, toolId))) throw toolErrors.notFound();
}

/** A new secret, answered once; the old one keeps signing beside it for {@link ROTATION_OVERLAP_MS}. */
export async function rotateSecret(deps: ToolServiceDeps, owner: Owner, assistantId: string) {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  return deps.sql.begin(async (tx) => {
    await q.lockAssistant(tx, assistant.id);
    const current = await q.findSecret(tx, assistant.id);
    if (!current) throw toolErrors.noSecret();
    const secret = newEndpointSecret();
    const previousExpiresAt = new Date(Date.now() + ROTATION_OVERLAP_MS);
    await q.rotateSecret(
      tx,
      assistant.id,
      deps.secrets.seal(secret, assistant.id),
      current.secretSealed,
      previousExpiresAt,
    );
    return { secret, previousSecretExpiresAt: previousExpiresAt.toISOString() };
  });
}

/** The secrets signing an assistant's tool calls now (the current one; the previous one during its overlap). */
export async function signingSecrets(deps: Pick<ToolServiceDeps, 'sql' | 'secrets'>, assistantId: string) {
  const row = await q.findSecret(deps.sql, assistantId);
  if (!row) throw new Error('the assistant has no tool secret');
  const previous =
    row.previousSecretSealed !== null &&
    row.previousSecretExpiresAt !== null &&
    row.previousSecretExpiresAt > new Date()
      ? [deps.secrets.open(row.previousSecretSealed, assistantId)]
      : [];
  return [deps.secrets.open(row.secretSealed, assistantId), ...previous];
}

/** The `call` of a test call's body: no conversation, source `test`, so the owner's server can tell it apart. */
export const TEST_CALL = { conversationId: 'test', source: 'test' } as const;

/**
 * One sample call of a tool, from its owner (the dashboard's Test): the arguments checked against its schema (a 400
 * naming the field otherwise, nothing sent), then the request a real call makes, signed with the assistant's tool
 * secret and bounded the same way. Nothing is stored: no conversation item, no analytics, no tool.failed event.
 */
export async function testTool(
  deps: ToolServiceDeps,
  owner: Owner,
  assistantId: string,
  toolId: string,
  args: Record<string, unknown>,
): Promise<{
  ok: boolean;
  status: ToolOutcome['status'];
  result?: unknown;
  error?: string;
  ms: number;
  toolCallId: string;
}> {
  const tool = await ownedTool(deps, owner, assistantId, toolId);
  const issues = argumentIssues(args, tool.parameters);
  if (issues.length > 0) throw validationError(issues.map((i) => ({ ...i, path: `body.${i.path}` })));
  const toolCallId = newToolCallId();
  const env = { secrets: () => signingSecrets(deps, tool.assistantId), policy: deps.policy, lookup: deps.lookup };
  const outcome = await callTool(env, tool, toolCallId, args, {
    ...TEST_CALL,
    assistantId: tool.assistantId,
    messages: [],
  });
  const ok = outcome.status === 'succeeded';
  return {
    ok,
    status: outcome.status,
    ...(ok ? { result: outcome.result ?? null } : { error: outcome.error ?? 'failed' }),
    ms: outcome.durationMs,
    toolCallId,
  };
}
