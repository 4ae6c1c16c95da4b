import t from 'tap';
import type { Test } from 'tap';
import { mintAsWidget, ownerWithVoice, startVoiceApp, voiceAssistant, waitFor } from './helpers.js';

/**
 * Two mints of one widget visitor at the same moment (a double click, two tabs restoring): the newer supersedes the
 * older before the concurrency check, so neither is refused and exactly one call of the visitor stays live.
 */
async function concurrentPairs(t: Test, env: Record<string, string>, pairs: number) {
  const app = await startVoiceApp(t, { env });
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  for (let i = 0; i < pairs; i++) {
    const visitorId = `visitor-race-${i}`;
    const both = await Promise.all([
      mintAsWidget(app, assistant, { visitorId }),
      mintAsWidget(app, assistant, { visitorId }),
    ]);
    t.same(
      both.map((r) => r.status),
      [200, 200],
      `pair ${i}: neither mint is refused (${both.map((r) => r.body.code ?? r.status).join(', ')})`,
    );
    const ids = both.map((r) => r.body.sessionId as string);
    const live = await waitFor(async () => {
      const rows = await app.database.sql<{ id: string; state: string; endReason: string | null }[]>`
        select id, state, end_reason from voice_sessions where id in ${app.database.sql(ids.filter(Boolean))}`;
      const active = rows.filter((r) => r.state === 'active');
      return rows.length === 2 && active.length === 1 ? rows : undefined;
    }, `pair ${i}: one call live, the other settled`).catch(() => undefined);
    t.ok(live, `pair ${i}: exactly one of the visitor's calls is live`);
    if (live)
      t.match(
        live.find((r) => r.state !== 'active'),
        { endReason: 'superseded' },
        'the other was superseded',
      );
    await Promise.all(ids.map((id) => app.app.voice.sessions.get(id)?.end(null)));
  }
}

t.test('shadow metering: concurrent pairs leave one call each', (t) =>
  concurrentPairs(t, { HOSTED_USAGE_ENFORCEMENT: 'shadow' }, 4),
);

t.test('enforce, a plan with one concurrent call: neither of a pair is refused', (t) =>
  concurrentPairs(t, { HOSTED_USAGE_ENFORCEMENT: 'enforce' }, 3),
);
