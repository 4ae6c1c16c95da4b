import { randomBytes } from 'node:crypto';
import type { OwnerPrincipal } from '../auth/index.js';
import { getAssistantById, hasIdShape, type Assistant } from '../assistants/index.js';
import type { Sql } from '../db/index.js';
import type { Logger } from '../log/index.js';
import type { Meter } from '../metering/index.js';
import type { ChatProviders } from '../providers/chat/index.js';
import { enqueueEvent } from '../webhooks/index.js';
import { analysisErrors } from './errors.js';
import { createHostedEngine } from './hosted-engine.js';
import { createLocalEngine } from './local-engine.js';
import * as q from './queries.js';
import { endOfCallReport, presentAnalysis, TRANSCRIPT_LIMIT, type RecordingLinkOf } from './report.js';
import { analyse, hasAnyStep, settingsVersion } from './steps.js';
import type { AnalysisEngine, AnalysisResult, StepName } from './types.js';

export interface AnalysisServiceDeps {
  sql: Sql;
  log: Logger;
  /** The deployment's chat providers: the assistant's, when it is a hosted model, performs the steps. */
  providers: ChatProviders;
  /** A signed, expiring link to the conversation's recording, or null without one (the report's recordingUrl). */
  recordingLinkOf?: RecordingLinkOf;
  /** Meters a hosted engine's requests as the assistant's chat usage (source `analysis`); without it, unmetered. */
  meter?: Meter;
}

/** After this many claims (each one an instance that died or a failure) the analysis is stored as failed. */
export const MAX_ATTEMPTS = 3;

/** The assistant's chat provider when it is a hosted model; otherwise (or when none is configured) the local engine. */
export function engineFor(
  assistant: Assistant,
  providers: ChatProviders,
  metering?: { meter: Meter; conversationId: string },
): AnalysisEngine {
  const chosen = assistant.settings.chatProvider;
  const name = chosen === 'default' ? providers.defaultName : chosen;
  const provider = name === 'openai' ? providers.get('openai') : undefined;
  if (!provider) return createLocalEngine();
  return createHostedEngine(
    provider,
    metering && { ...metering, accountId: assistant.accountId, assistantId: assistant.id },
  );
}

/** Queues the analysis of a conversation that ended, once per trigger and settings version. */
export async function enqueueEnded(
  sql: Sql,
  candidate: { conversationId: string; accountId: string; assistantId: string; trigger: string },
  assistantOf: (id: string) => Promise<Assistant | undefined>,
): Promise<boolean> {
  const assistant = await assistantOf(candidate.assistantId);
  if (!assistant || !hasAnyStep(assistant.settings.analysis)) return false;
  return q.enqueue(sql, { ...candidate, version: settingsVersion(assistant.settings.analysis) });
}

function failedResult(engine: AnalysisEngine, assistant: Assistant, reason: string): AnalysisResult {
  const settings = assistant.settings.analysis;
  const enabled: StepName[] = [
    ...(settings.summary ? (['summary'] as const) : []),
    ...(settings.structuredData ? (['structuredData'] as const) : []),
    ...(settings.successEvaluation ? (['successEvaluation'] as const) : []),
    ...(settings.sentiment ? (['sentiment'] as const) : []),
  ];
  return {
    engine: engine.name,
    model: engine.model,
    settingsVersion: settingsVersion(settings),
    summary: null,
    structuredData: null,
    successEvaluation: null,
    sentiment: null,
    steps: enabled.map((step) => ({ step, status: 'failed', reason, notes: [] })),
    costMicros: 0,
  };
}

/**
 * Analyses one claimed conversation and, if the lease is still ours, stores the result and queues its
 * conversation.analyzed webhook in one transaction: both happen once, whoever ran it and however often it was
 * claimed. Throws AnalysisAbandoned when `signal` aborts (the caller gives the lease back).
 */
export async function runJob(
  deps: AnalysisServiceDeps,
  job: q.ClaimedJob,
  token: string,
  signal: AbortSignal,
): Promise<'done' | 'superseded' | 'gone'> {
  const { sql } = deps;
  const conversation = await q.findConversation(sql, job.conversationId);
  const assistant = await getAssistantById(sql, job.assistantId);
  if (!conversation || !assistant) return 'gone';
  const engine = engineFor(
    assistant,
    deps.providers,
    deps.meter && { meter: deps.meter, conversationId: conversation.id },
  );
  const transcript = await q.transcriptOf(sql, conversation.id, TRANSCRIPT_LIMIT);
  const result =
    job.attempts > MAX_ATTEMPTS
      ? failedResult(engine, assistant, `the analysis was interrupted ${MAX_ATTEMPTS} times`)
      : await analyse(engine, transcript, assistant.settings.analysis, signal);
  const stored = await sql.begin(async (tx) => {
    if (!(await q.complete(tx, conversation.id, token, result))) return false;
    const row = await q.findAnalysis(tx, conversation.accountId, conversation.id);
    const report = await endOfCallReport(tx, conversation, transcript, presentAnalysis(row!), deps.recordingLinkOf);
    await enqueueEvent(tx, conversation.accountId, 'conversation.analyzed', report);
    return true;
  });
  deps.log.info(
    { conversationId: conversation.id, engine: engine.name, steps: result.steps.map((s) => `${s.step}:${s.status}`) },
    stored ? 'conversation analysed' : 'conversation analysis superseded; not stored',
  );
  return stored ? 'done' : 'superseded';
}

async function ownedConversation(sql: Sql, owner: Pick<OwnerPrincipal, 'accountId'>, id: string) {
  const conversation = hasIdShape('conv', id) ? await q.findConversation(sql, id) : undefined;
  if (!conversation || conversation.accountId !== owner.accountId) throw analysisErrors.conversationNotFound();
  return conversation;
}

/** The conversation's analysis, or null when it has none (yet). Another account's conversation is 404. */
export async function getAnalysis(sql: Sql, owner: Pick<OwnerPrincipal, 'accountId'>, conversationId: string) {
  const conversation = await ownedConversation(sql, owner, conversationId);
  const row = await q.findAnalysis(sql, owner.accountId, conversation.id);
  return row ? presentAnalysis(row) : null;
}

/** Queues the analysis again with the assistant's current settings (409 when no step is on). */
export async function rerun(sql: Sql, owner: Pick<OwnerPrincipal, 'accountId'>, conversationId: string) {
  const conversation = await ownedConversation(sql, owner, conversationId);
  const assistant = await getAssistantById(sql, conversation.assistantId);
  if (!assistant || !hasAnyStep(assistant.settings.analysis)) throw analysisErrors.notEnabled();
  await q.enqueue(
    sql,
    {
      conversationId: conversation.id,
      accountId: conversation.accountId,
      assistantId: conversation.assistantId,
      version: settingsVersion(assistant.settings.analysis),
      trigger: `rerun:${randomBytes(6).toString('base64url')}`,
    },
    true,
  );
  return presentAnalysis((await q.findAnalysis(sql, owner.accountId, conversation.id))!);
}

/**
 * Queues a chat conversation's analysis now, as if it had gone idle (same trigger, so the idle sweep will not analyse
 * it again). For callers that know the chat is over (a scenario run); false when no analysis step is on.
 */
export async function analyseEndedChat(sql: Sql, accountId: string, conversationId: string): Promise<boolean> {
  const chat = await q.endedChat(sql, accountId, conversationId);
  if (!chat) return false;
  return enqueueEnded(sql, chat, (id) => getAssistantById(sql, id));
}

/** For the conversation detail: its analysis or null (no ownership check: the caller made it). */
export async function analysisOf(sql: Sql, accountId: string, conversationId: string) {
  const row = await q.findAnalysis(sql, accountId, conversationId);
  return row ? presentAnalysis(row) : null;
}
