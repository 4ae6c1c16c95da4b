import type { TransactionSql } from '../db/index.js';
import type { Meter } from '../metering/index.js';
import { estimateTokens } from '../metering/index.js';

/**
 * The metering seam of chat. Chat calls `admit` before the provider call (it may refuse, with an error already
 * shaped for the audience), then exactly one of `settle` (tokens and cost of what was produced, even for a failed
 * or cut-off answer) or `release` (the provider was never called). The default records nothing.
 */
export interface ChatMeter {
  /** Output-token ceiling to pass to the provider. */
  readonly maxOutputTokens: number;
  admit(request: ChatAdmitRequest): Promise<ChatReservation>;
  /** Returns the cost recorded, in micros (stored on the answer message). `tx`: settle inside the turn's transaction. */
  settle(reservation: ChatReservation, usage: ChatUsage, tx?: TransactionSql): Promise<number>;
  release(reservation: ChatReservation): Promise<void>;
}

export interface ChatAdmitRequest {
  accountId: string;
  assistantId: string;
  /** The conversation the turn belongs to (the ledger answers what a conversation cost). */
  conversationId?: string;
  source: 'api' | 'widget' | 'playground' | 'test';
  /** Owners see reasons and limits; visitors a neutral refusal. */
  audience: 'owner' | 'visitor';
  provider: 'openai' | 'local';
  model: string;
  /** The prompt as sent (for the estimate). */
  promptText: string;
  promptMessages: number;
}

export interface ChatUsage {
  provider: 'openai' | 'local';
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export type ChatReservation = { readonly handle: unknown };

/** Records nothing, refuses nothing. */
export const unmeteredChat: ChatMeter = {
  maxOutputTokens: 1024,
  admit: async () => ({ handle: null }),
  settle: async () => 0,
  release: async () => undefined,
};

/**
 * Chat over the service meter (src/metering): the estimate prices the prompt exactly and the output at the
 * ceiling; the local provider costs nothing (no model is called) but is still counted as a request.
 */
export function chatMeterFrom(meter: Meter): ChatMeter {
  return {
    get maxOutputTokens() {
      return meter.maxOutputTokens;
    },
    async admit(request) {
      const inputTokens = estimateTokens(request.promptText, request.promptMessages);
      const reservation = await meter.admit({
        accountId: request.accountId,
        kind: 'chat',
        source: request.source,
        audience: request.audience,
        estimateMicros: request.provider === 'local' ? 0 : meter.estimateChat(request.model, inputTokens),
        assistantId: request.assistantId,
        conversationId: request.conversationId ?? null,
      });
      return { handle: reservation };
    },
    async settle(reservation, usage, tx) {
      const outcome = await meter.settle(
        reservation.handle as Parameters<Meter['settle']>[0],
        usage.provider === 'local'
          ? { actualMicros: 0, model: usage.model, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens }
          : { model: usage.model, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens },
        tx,
      );
      return outcome.costMicros;
    },
    async release(reservation) {
      await meter.release(reservation.handle as Parameters<Meter['release']>[0]);
    },
  };
}
