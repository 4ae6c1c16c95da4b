import { getAssistantByPublicId, getOwnedAssistant, newKnowledgeId, type Assistant } from '../assistants/index.js';
import { callerSource, type CallerSource, type Principal } from '../auth/principal.js';
import {
  completeToolItem,
  findContinuableConversation,
  recordToolItems,
  recentMessages,
  recordExchange,
  type ConversationSource,
  type Outcome,
  type StoredSource,
} from '../conversations/index.js';
import type { Admission } from '../admission/index.js';
import type { Sql, TransactionSql } from '../db/index.js';
import type { Logger } from '../log/index.js';
import { ChatProviderError, type ChatProvider, type ChatProviders } from '../providers/chat/index.js';
import { retrievePassages, sourcesOf, type Passage } from '../retrieval/index.js';
import type { RuntimeTool, ToolRuntime } from '../tools/index.js';
import type { PolicyRequest, WidgetPolicy } from '../widget/index.js';
import { chatErrors } from './errors.js';
import type { ChatMeter, ChatReservation } from './meter.js';
import { buildMessages } from './prompt.js';
import { runToolLoop, type ToolProgress, type TurnTools } from './tool-loop.js';

export interface ChatDeps {
  sql: Sql;
  log: Logger;
  providers: ChatProviders;
  meter: ChatMeter;
  policy: WidgetPolicy;
  /** Admission control in front of each chat turn (absent: none). */
  admission?: Admission | undefined;
  /** The assistants' server tools (absent: chat offers none). */
  tools?: ToolRuntime | undefined;
}

export interface ChatBody {
  assistantId: string;
  message: string;
  conversationId?: string | undefined;
  visitorId?: string | undefined;
  history?: Array<{ role: 'user' | 'assistant'; content: string }> | undefined;
  source?: CallerSource | undefined;
  voiceUnavailable?: boolean | undefined;
}

/** Passages retrieved per question. */
export const TOP_K = 5;
/** Stored messages replayed to the provider when a conversation continues. */
export const HISTORY_MESSAGES = 20;

export interface PreparedChat {
  assistant: Assistant;
  provider: ChatProvider;
  conversation: { id: string; visitorId: string | null; source: ConversationSource };
  question: string;
  passages: Passage[];
  sources: StoredSource[];
  request: Parameters<ChatProvider['stream']>[0];
  reservation: ChatReservation;
  /** The assistant's tools, offered to the provider this turn. */
  tools: RuntimeTool[];
}

export interface ChatResult {
  messageId: string;
  conversationId: string;
  answer: string;
  sources: StoredSource[];
  outcome: Outcome;
  /** Set when the provider failed (before or during the answer); the exchange is stored with outcome model_failure. */
  error?: ChatProviderError | undefined;
}

/**
 * Everything that can refuse a chat, before any provider call: the assistant (keyless callers by public id
 * only, after the widget policy; owners by either id of their own assistant), the conversation, the provider
 * (503 when not configured), retrieval, and the meter's admission.
 */
export async function prepareChat(
  deps: ChatDeps,
  principal: Principal,
  request: PolicyRequest,
  body: ChatBody,
): Promise<PreparedChat> {
  const keyless = principal.kind === 'keyless';
  let assistant: Assistant;
  if (keyless) {
    assistant = await getAssistantByPublicId(deps.sql, body.assistantId);
    await deps.policy.admit(request, assistant, body.visitorId ?? null);
  } else {
    assistant = await getOwnedAssistant(deps.sql, principal, body.assistantId);
  }
  // Playground only for the owner's dashboard session; a keyless or API-key caller gets its real source.
  const source: ConversationSource = callerSource(principal, body.source);
  const visitorId = body.visitorId ?? null;

  let conversationId: string;
  let history: Array<{ role: 'user' | 'assistant'; content: string }>;
  if (body.conversationId !== undefined) {
    const existing = await findContinuableConversation(
      deps.sql,
      body.conversationId,
      assistant.id,
      keyless ? visitorId : undefined,
    );
    if (!existing) throw chatErrors.conversationNotFound();
    conversationId = existing.id;
    history = await recentMessages(deps.sql, existing.id, HISTORY_MESSAGES);
  } else {
    conversationId = newKnowledgeId('conv');
    history = body.history ?? [];
  }

  const providerName =
    assistant.settings.chatProvider === 'default' ? deps.providers.defaultName : assistant.settings.chatProvider;
  const provider = deps.providers.get(providerName);
  if (!provider) throw chatErrors.providerNotConfigured(providerName);

  const [passages, tools] = await Promise.all([
    retrievePassages(deps.sql, { id: assistant.id, language: assistant.settings.language }, body.message, TOP_K),
    deps.tools ? deps.tools.toolsOf(assistant.id) : [],
  ]);
  const messages = buildMessages({
    instructions: assistant.instructions,
    passages,
    history,
    question: body.message,
    voiceUnavailable: body.voiceUnavailable === true,
  });
  const reservation = await deps.meter.admit({
    accountId: assistant.accountId,
    assistantId: assistant.id,
    conversationId,
    source,
    audience: keyless ? 'visitor' : 'owner',
    provider: provider.name,
    model: provider.model,
    promptText: messages.map((m) => m.content).join('\n'),
    promptMessages: messages.length,
  });
  return {
    assistant,
    provider,
    conversation: { id: conversationId, visitorId, source },
    question: body.message,
    passages,
    sources: sourcesOf(passages, body.message),
    request: {
      messages,
      passages: passages.map((p) => ({ documentName: p.documentName, heading: p.heading, content: p.content })),
      question: body.message,
      voiceUnavailable: body.voiceUnavailable === true,
      maxOutputTokens: deps.meter.maxOutputTokens,
    },
    reservation,
    tools,
  };
}

/**
 * Runs the provider, hands each text piece to `onText` as it arrives, then stores the exchange (also when the
 * provider failed: outcome model_failure) and settles the meter. Provider failures are returned in `error`,
 * not thrown, so the caller decides how to show them (HTTP status before the stream began, an SSE `error` after).
 * `voiceUnavailable` shapes the answer only; it is stored nowhere.
 */
export async function runChat(
  deps: ChatDeps,
  prepared: PreparedChat,
  options: { signal: AbortSignal; onText?: (text: string) => void; onTool?: (progress: ToolProgress) => void },
): Promise<ChatResult> {
  const { provider } = prepared;
  let answer = '';
  let usage: { inputTokens: number; outputTokens: number } | undefined;
  let error: ChatProviderError | undefined;
  const turnTools: TurnTools = { items: [], pending: [] };
  const turn = runToolLoop(
    {
      provider,
      request: prepared.request,
      tools: prepared.tools,
      runtime: deps.tools,
      context: {
        conversationId: prepared.conversation.id,
        assistantId: prepared.assistant.id,
        source: prepared.conversation.source,
      },
      signal: options.signal,
      onTool: options.onTool,
    },
    turnTools,
  );
  try {
    for await (const event of turn) {
      if (event.type === 'text') {
        answer += event.text;
        options.onText?.(event.text);
      } else usage = { inputTokens: event.inputTokens, outputTokens: event.outputTokens };
    }
  } catch (err) {
    error =
      err instanceof ChatProviderError
        ? err
        : new ChatProviderError('interrupted', 'The provider failed.', { cause: err });
    if (error.failure !== 'aborted')
      deps.log.warn(
        { provider: provider.name, failure: error.failure, status: error.status, partial: answer.length > 0 },
        'chat provider failed',
      );
  }
  const failed = error !== undefined && error.failure !== 'aborted';
  const usedTool = turnTools.items.some((i) => i.status !== 'failed');
  const outcome: Outcome = failed
    ? 'model_failure'
    : prepared.passages.length > 0 || usedTool
      ? 'answered'
      : 'no_answer';
  const inputTokens =
    usage?.inputTokens ??
    (answer.length > 0 || failed
      ? Math.ceil(prepared.request.messages.reduce((n, m) => n + m.content.length, 0) / 4)
      : 0);
  const outputTokens = usage?.outputTokens ?? Math.ceil(answer.length / 4);

  // Nothing reached the provider (could not connect): give the reservation back; otherwise settle what was used.
  const release =
    error !== undefined && answer.length === 0 && (error.failure === 'connection' || error.failure === 'aborted');
  if (release) await deps.meter.release(prepared.reservation);

  // The turn's writes in one transaction (one commit instead of several): the settle (a row lock, then its writes
  // pipelined) and the exchange (four pipelined statements). Either both land or neither: no stored answer without its
  // usage.
  const messageId = newKnowledgeId('msg');
  const userMessageId = newKnowledgeId('msg');
  await storeTurn(deps, prepared, release, async (tx) => {
    const costMicros = release
      ? 0
      : await deps.meter.settle(
          prepared.reservation,
          { provider: provider.name, model: provider.model, inputTokens, outputTokens },
          tx,
        );
    await recordExchange(tx, {
      conversation: {
        id: prepared.conversation.id,
        assistantId: prepared.assistant.id,
        accountId: prepared.assistant.accountId,
        visitorId: prepared.conversation.visitorId,
        source: prepared.conversation.source,
      },
      user: { id: userMessageId, content: prepared.question },
      answer: {
        id: messageId,
        content: answer,
        outcome,
        sources: outcome === 'model_failure' ? [] : prepared.sources,
        provider: provider.name,
        model: provider.model,
        inputTokens,
        outputTokens,
        costMicros,
      },
    });
    if (turnTools.items.length > 0)
      await recordToolItems(
        tx,
        { id: prepared.conversation.id, assistantId: prepared.assistant.id },
        turnTools.items.map((item) => ({ ...item, inReplyTo: userMessageId })),
      );
  });
  // An async tool's result completes its item when it arrives (after the turn's rows exist).
  for (const { id, outcome } of turnTools.pending)
    void outcome
      .then((o) => completeToolItem(deps.sql, id, o))
      .catch((err: unknown) => deps.log.warn({ err, toolCallId: id }, 'async tool result not stored'));
  return { messageId, conversationId: prepared.conversation.id, answer, sources: prepared.sources, outcome, error };
}

/**
 * The turn's transaction. When it fails (the database did not answer in time, the connection broke), the turn's
 * reservation is released at once instead of holding the account's budget until the sweeper expires it.
 */
async function storeTurn(
  deps: ChatDeps,
  prepared: PreparedChat,
  released: boolean,
  writes: (tx: TransactionSql) => Promise<void>,
): Promise<void> {
  try {
    await deps.sql.begin(writes);
  } catch (err) {
    if (!released)
      await deps.meter.release(prepared.reservation).catch((releaseErr: unknown) => {
        deps.log.warn({ err: releaseErr }, 'chat reservation not released after a failed turn; the sweeper will');
      });
    throw err;
  }
}
