import { getAssistantById, getAssistantByPublicId, hasIdShape } from '../assistants/index.js';
import { findFeedbackTarget, isVisitorsOwnConversation, upsertFeedback } from '../conversations/index.js';
import type { Sql } from '../db/index.js';
import { widgetErrors } from './errors.js';
import type { PolicyRequest, WidgetPolicy } from './policy.js';

export interface WidgetDeps {
  sql: Sql;
  policy: WidgetPolicy;
}

/** What the embeddable widget needs to render; public by design (the public id is a capability). */
export async function widgetConfig(deps: WidgetDeps, request: PolicyRequest, publicId: string) {
  const assistant = await getAssistantByPublicId(deps.sql, publicId);
  await deps.policy.admit(request, assistant, null, { signature: false });
  const { voice } = assistant.settings;
  return {
    assistantId: assistant.publicId,
    name: assistant.name,
    welcomeMessage: assistant.welcomeMessage,
    voice: { enabled: voice.enabled, recording: voice.recording, requireConsent: voice.requireConsent },
    requireWidgetSigning: assistant.settings.requireWidgetSigning,
  };
}

/** Signs a visitor id for an assistant (the widget sends it back as X-Parley-Signature). */
export async function signVisitor(
  deps: WidgetDeps,
  request: PolicyRequest,
  input: { assistantId: string; visitorId: string },
) {
  const assistant = await getAssistantByPublicId(deps.sql, input.assistantId);
  await deps.policy.admit(request, assistant, input.visitorId, { signature: false });
  return deps.policy.sign(assistant.publicId, input.visitorId);
}

/**
 * A visitor rates an answer. The message must be an answer of an assistant whose policy admits this request, in a
 * conversation of this same visitor (otherwise it is simply not found).
 */
export async function recordFeedback(
  deps: WidgetDeps,
  request: PolicyRequest,
  input: { messageId: string; rating: 'positive' | 'negative'; visitorId?: string | undefined },
) {
  const target = hasIdShape('msg', input.messageId) ? await findFeedbackTarget(deps.sql, input.messageId) : undefined;
  if (!target || target.role !== 'assistant') throw widgetErrors.messageNotFound();
  const assistant = await getAssistantById(deps.sql, target.assistantId);
  if (!assistant) throw widgetErrors.messageNotFound();
  const visitorId = input.visitorId ?? null;
  await deps.policy.admit(request, assistant, visitorId);
  if (!isVisitorsOwnConversation(target, visitorId)) throw widgetErrors.messageNotFound(); // never an API or another visitor's answer
  const row = await upsertFeedback(deps.sql, {
    messageId: target.id,
    assistantId: assistant.id,
    rating: input.rating,
    visitorId,
  });
  return {
    messageId: row.messageId,
    rating: row.rating,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
