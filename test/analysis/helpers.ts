import type { Test } from 'tap';
import { Webhook } from 'standardwebhooks';
import { createAnalysisWorker, type AnalysisWorkerOptions } from '../../src/analysis/index.js';
import type { Sql } from '../../src/db/index.js';
import { createChatProviders, type ChatProviders } from '../../src/providers/chat/index.js';
import type { TestApp } from '../helpers/app.js';
import type { Receiver } from '../webhooks/helpers.js';

/** Summary, a `{ orderNumber, callbackRequested, email, plan }` schema, pass/fail success and sentiment. */
export const ANALYSIS = {
  summary: true,
  structuredData: {
    schema: {
      type: 'object',
      properties: {
        orderNumber: { type: 'integer', description: 'The order the caller asks about.' },
        callbackRequested: { type: 'boolean' },
        email: { type: 'string', format: 'email' },
        plan: { enum: ['basic', 'premium'] },
      },
      required: ['orderNumber'],
    },
  },
  successEvaluation: { rubric: 'pass_fail' },
  sentiment: true,
} as const;

/**
 * Marks a conversation as quiet for `minutes` (its updated_at in the past). The touch trigger would put now() back,
 * so it is bypassed for this one statement (the test database's user is its owner).
 */
export async function backdate(sql: Sql, conversationId: string, minutes: number): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await tx`update conversations set updated_at = now() - ${minutes} * interval '1 minute' where id = ${conversationId}`;
  });
}

/**
 * A second analysis worker on the app's database with fast sweeps (the app's own runs beside it: every analysis
 * must still happen once). Stopped at teardown.
 */
export function startFastWorker(
  t: Test,
  app: TestApp,
  options: AnalysisWorkerOptions & { providers?: ChatProviders } = {},
) {
  const worker = createAnalysisWorker(
    { sql: app.deps.sql, log: app.logs.log, providers: options.providers ?? createChatProviders(app.config) },
    { pollMs: 50, voiceSweepMs: 50, chatSweepMs: 50, ...options },
  );
  worker.start();
  t.teardown(() => worker.stop());
  return worker;
}

/** Every webhook the receiver got, verified with the endpoint's secret (Standard Webhooks' own verifier). */
export function verifiedPayloads(receiver: Receiver, secret: string): any[] {
  return receiver.received.map((hook) => new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>));
}

export async function analysisRows(sql: Sql, conversationId: string) {
  return sql<Array<{ status: string; attempts: number; result: any }>>`
    select status, attempts, result from conversation_analyses where conversation_id = ${conversationId}`;
}
