import t from 'tap';
import { createAnalysisWorker } from '../../src/analysis/index.js';
import { createAssistant, newKnowledgeId } from '../../src/assistants/index.js';
import { recordExchange } from '../../src/conversations/index.js';
import { createChatProviders } from '../../src/providers/chat/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { createOwner } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';
import { createTestMeter } from '../helpers/metering.js';
import { startChatSimulator } from '../providers/chat/simulator.js';
import { eventually } from '../webhooks/helpers.js';
import { backdate } from './helpers.js';

t.test('an instance stopped in the middle of the queue: the next one loses nothing and repeats nothing', async (t) => {
  const { sql } = await createTestDatabase(t);
  const sim = await startChatSimulator(t);
  const providers = createChatProviders({
    CHAT_PROVIDER: 'openai',
    OPENAI_BASE_URL: sim.baseUrl,
    OPENAI_API_KEY: 'sk-test',
    OPENAI_MODEL: 'gpt-4o-mini',
    OPENAI_TIMEOUT_MS: 60_000,
  });
  const owner = await createOwner(sql);
  const assistant = await createAssistant(
    sql,
    { accountId: owner.accountId },
    { name: 'Orders', settings: { chatProvider: 'openai', analysis: { summary: true, chatIdleMinutes: 1 } } },
  );
  // An endpoint subscribed to the event, so each report is written to the outbox (nothing delivers it here).
  await sql`
    insert into webhook_endpoints (id, account_id, url, events, secret_sealed)
    values ('whep_restart', ${owner.accountId}, 'https://hooks.example/parley', ${sql.array(['conversation.analyzed'])}, 'sealed')`;
  const conversations: string[] = [];
  for (let i = 0; i < 3; i++) {
    const id = newKnowledgeId('conv');
    await sql.begin((tx) =>
      recordExchange(tx, {
        conversation: { id, assistantId: assistant.id, accountId: owner.accountId, visitorId: null, source: 'api' },
        user: { id: newKnowledgeId('msg'), content: `Question ${i}?` },
        answer: {
          id: newKnowledgeId('msg'),
          content: `Answer ${i}.`,
          outcome: 'answered',
          sources: [],
          provider: 'openai',
          model: 'gpt-4o-mini',
          inputTokens: 1,
          outputTokens: 1,
          costMicros: 1,
        },
      }),
    );
    await backdate(sql, id, 10 - i); // the first is the oldest: analysed first
    conversations.push(id);
  }
  // The first summary comes back; the second hangs until its instance stops.
  sim.script(
    { kind: 'stream', pieces: ['Summary one.'] },
    { kind: 'slow', delayMs: 60_000 },
    { kind: 'stream', pieces: ['Summary again.'] },
  );
  // Each request is metered (as analysis usage of the assistant): a restart must not charge a run twice.
  const { meter } = createTestMeter(sql, { config: { HOSTED_USAGE_ENFORCEMENT: 'shadow' } });
  const start = () => {
    const worker = createAnalysisWorker(
      { sql, log: captureLogger('info').log, providers, meter },
      { pollMs: 20, voiceSweepMs: 20, chatSweepMs: 20 },
    );
    worker.start();
    return worker;
  };
  const first = start();
  await eventually(() => sim.requests.length === 2, 'the first instance is in the middle of the second analysis');
  await first.stop();

  const second = start();
  t.teardown(() => second.stop());
  const done = () => sql<Array<{ conversationId: string; attempts: number; result: any }>>`
    select conversation_id, attempts, result from conversation_analyses where status = 'done' order by requested_at`;
  await eventually(async () => (await done()).length === 3, 'every conversation analysed');

  const rows = await done();
  t.same(
    rows.map((r) => r.conversationId),
    conversations,
    'all three, in the order they went quiet',
  );
  t.same(
    rows.map((r) => r.result.summary),
    ['Summary one.', 'Summary again.', 'Summary again.'],
  );
  t.same(
    rows.map((r) => r.attempts),
    [1, 1, 1],
    'the analysis given back at the stop was not counted as an attempt',
  );
  t.equal(sim.requests.length, 4, 'the finished analysis was not run again (one request each, plus the abandoned one)');
  const usage = await sql<Array<{ outcome: string; count: number }>>`
    select outcome, count(*)::int as count from usage_events
    where source = 'analysis' and assistant_id = ${assistant.id} group by outcome order by outcome`;
  t.same(
    usage,
    [
      { outcome: 'released', count: 1 },
      { outcome: 'settled', count: 3 },
    ],
    'one charge per analysis; the abandoned request was given back, not charged',
  );
  const [open] = await sql<Array<{ count: number }>>`
    select count(*)::int as count from usage_reservations where source = 'analysis' and status = 'open'`;
  t.equal(open!.count, 0, 'nothing is left reserved');
  const reports = await sql<Array<{ conversationId: string }>>`
    select body::jsonb->'data'->>'conversationId' as conversation_id from webhook_messages
    where event_type = 'conversation.analyzed' order by created_at`;
  t.same(
    reports.map((r) => r.conversationId),
    conversations,
    'one report per conversation',
  );
});
