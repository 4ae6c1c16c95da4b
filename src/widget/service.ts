import { getAssistantById, getAssistantByPublicId, getOwnedAssistant, hasIdShape } from '../assistants/index.js';
import { findFeedbackTarget, isVisitorsOwnConversation, upsertFeedback } from '../conversations/index.js';
import type { Sql } from '../db/index.js';
import { widgetErrors } from './errors.js';
import { newVisitorId, type PolicyRequest, type WidgetPolicy } from './policy.js';
import { rotateSecretGeneration } from './queries.js';

export interface WidgetDeps {
  sql: Sql;
  policy: WidgetPolicy;
  /** The transports this server's voice provider takes, in the order to try them (none without a provider). */
  voiceTransports?: ReadonlyArray<'webrtc' | 'websocket'>;
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
    voice: {
      enabled: voice.enabled,
      recording: voice.recording,
      requireConsent: voice.requireConsent,
      transports: [...(deps.voiceTransports ?? [])],
    },
    requireWidgetSigning: assistant.settings.requireWidgetSigning,
  };
}

/** How old a visitor's previous signature may be for POST /api/v1/widget/sign to renew it (7 days). */
export const SIGNATURE_RENEWAL_SECONDS = 7 * 24 * 3600;

/**
 * Signs a visitor id for an assistant (the widget sends it back as X-Parley-Signature). Without a visitor id, Parley
 * makes one up and signs it: a new visitor. With one, only a renewal: the request must carry that visitor's previous
 * signature (Parley's, or the owner's made with the widget secret) in X-Parley-Signature, at most 7 days old. An id
 * a caller merely knows is never signed, so knowing another visitor's id gives no way to act as them.
 */
export async function signVisitor(
  deps: WidgetDeps,
  request: PolicyRequest,
  input: { assistantId: string; visitorId?: string | undefined },
) {
  const assistant = await getAssistantByPublicId(deps.sql, input.assistantId);
  await deps.policy.admit(request, assistant, input.visitorId ?? null, { signature: false });
  if (input.visitorId === undefined) {
    const visitorId = newVisitorId();
    return { visitorId, ...deps.policy.sign(assistant.publicId, visitorId) };
  }
  const previous = request.headers['x-parley-signature'];
  if (previous === undefined) throw widgetErrors.signatureRequired();
  if (!(await deps.policy.verifyPrevious(previous, assistant, input.visitorId, SIGNATURE_RENEWAL_SECONDS)))
    throw widgetErrors.signatureInvalid();
  return { visitorId: input.visitorId, ...deps.policy.sign(assistant.publicId, input.visitorId) };
}

/**
 * Issues the assistant's widget secret (a new one on every call; the previous one stops working at once). The owner's
 * backend signs its signed-in users' visitor ids with it; the secret is shown only in this answer.
 */
export async function rotateWidgetSecret(deps: WidgetDeps, owner: { accountId: string }, assistantId: string) {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  const { generation, rotatedAt } = await rotateSecretGeneration(deps.sql, assistant.id);
  return { assistantId: assistant.publicId, secret: deps.policy.widgetSecret(assistant.id, generation), rotatedAt };
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
