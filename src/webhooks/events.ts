import { randomBytes } from 'node:crypto';
import type { Sql, TransactionSql } from '../db/index.js';
import * as q from './queries.js';

/** The events an endpoint can subscribe to. `webhook.test` is sent only on request, to one endpoint. */
export const WEBHOOK_EVENT_TYPES = [
  'voice.session.started',
  'voice.session.ended',
  'document.processed',
  'document.failed',
  'budget.threshold_crossed',
  'conversation.analyzed',
  'tool.failed',
  'call.status_changed',
  'call-batch.completed',
  'scenario-run.completed',
] as const;
export type SubscribableEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export const TEST_EVENT_TYPE = 'webhook.test';
export type WebhookEventType = SubscribableEventType | typeof TEST_EVENT_TYPE;

/** A message id: the `webhook-id` of every attempt of it. */
export function newMessageId(): string {
  return `msg_${randomBytes(16).toString('base64url').replace(/[-_]/g, '')}`;
}

/** The body every attempt sends: `{type, timestamp, data}` (Standard Webhooks payload shape). */
export function messageBody(type: WebhookEventType, data: Record<string, unknown>, at = new Date()): string {
  return JSON.stringify({ type, timestamp: at.toISOString(), data });
}

/**
 * Queues `type` with `data` for every enabled endpoint of the account subscribed to it, durably (the delivery worker
 * of any instance sends it). Pass the transaction that writes the fact the event reports, so both commit or neither
 * does. `data` must carry no secrets, and no transcript or message text except in `conversation.analyzed` (the
end-of-call report an owner subscribes to for exactly that). Resolves how many deliveries were queued
 * (0 when no endpoint wants the event: then nothing is written).
 */
export async function enqueueEvent(
  sql: Sql | TransactionSql,
  accountId: string,
  type: SubscribableEventType,
  data: Record<string, unknown>,
): Promise<number> {
  return q.enqueueForSubscribers(sql, {
    id: newMessageId(),
    accountId,
    eventType: type,
    body: messageBody(type, data),
  });
}

/**
 * voice.session.started: the call was stored as active (run inside the transaction that stores it). `transport` is
 * the one the mint chose (websocket, phone, webrtc), the name its timeline carries.
 */
export async function enqueueVoiceStarted(
  tx: Sql | TransactionSql,
  sessionId: string,
  transport: string,
): Promise<void> {
  const facts = await q.voiceSessionFacts(tx, sessionId);
  if (!facts) return;
  await enqueueEvent(tx, facts.accountId, 'voice.session.started', {
    sessionId: facts.id,
    conversationId: facts.conversationId,
    assistantId: facts.assistantId,
    source: facts.source,
    transport,
  });
}

/** voice.session.ended: once the call is settled (its row ended or lost, its usage recorded). */
export async function enqueueVoiceEnded(sql: Sql, sessionId: string): Promise<void> {
  const facts = await q.voiceSessionFacts(sql, sessionId);
  if (!facts || facts.state === 'active') return;
  await enqueueEvent(sql, facts.accountId, 'voice.session.ended', {
    sessionId: facts.id,
    conversationId: facts.conversationId,
    assistantId: facts.assistantId,
    source: facts.source,
    transport: facts.transport,
    endReason: facts.endReason,
    endedBy: facts.endedBy,
    durationSeconds: facts.durationSeconds,
    billableSeconds: facts.billableSeconds,
    costMicros: Number(facts.costMicros),
  });
}

/** What the ingestion worker reports about a document whose processing ended. */
export interface DocumentOutcome {
  id: string;
  accountId: string;
  assistantId: string;
}

/**
 * document.processed / document.failed, inside the transaction that stores the outcome. `failure` is the document's
 * owner-facing error; its code is DOCUMENT_USAGE_REFUSED when the usage budget refused the work, else
 * DOCUMENT_PROCESSING_FAILED.
 */
export async function enqueueDocumentOutcome(
  tx: TransactionSql,
  doc: DocumentOutcome,
  failure?: string,
): Promise<void> {
  if (failure === undefined) {
    await enqueueEvent(tx, doc.accountId, 'document.processed', {
      documentId: doc.id,
      assistantId: doc.assistantId,
      status: 'ready',
    });
    return;
  }
  await enqueueEvent(tx, doc.accountId, 'document.failed', {
    documentId: doc.id,
    assistantId: doc.assistantId,
    status: 'failed',
    errorCode: failure.startsWith('Not processed:') ? 'DOCUMENT_USAGE_REFUSED' : 'DOCUMENT_PROCESSING_FAILED',
    error: failure,
  });
}

/**
 * A budget threshold crossing (the meter calls this once per crossing, inside the transaction that recorded it), queued
 * as `budget.threshold_crossed`; the payload names no account id (an endpoint belongs to one account).
 */
export async function enqueueBudgetAlert(
  tx: Sql | TransactionSql,
  { accountId, ...data }: { accountId: string } & Record<string, unknown>,
): Promise<void> {
  await enqueueEvent(tx, accountId, 'budget.threshold_crossed', data);
}
