import t from 'tap';
import { bearer, createOwner } from '../helpers/identity.js';
import { endWithKey, heartbeat, mintWithKey, post, startVoiceApp, voiceAssistant } from '../voice/helpers.js';

/**
 * After a key spent its per-minute request budget, 30 of 50 ends answered 429 and those calls ran
 * (and billed) until the service ended them. End and heartbeat are flagged `rateLimitExempt` in the route table.
 */
const LIMIT = 6;
const app = await startVoiceApp(t, { env: { API_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
const owner = await createOwner(app.database.sql);
await app.database.sql`update hosting_accounts set plan_code = 'business' where account_id = ${owner.accountId}`;
const assistant = await voiceAssistant(app, owner);

t.test('a key that spent its budget can still end its calls and keep heartbeats going', async (t) => {
  const calls = [];
  for (let i = 0; i < 3; i++) calls.push(await mintWithKey(app, owner, assistant));
  // Spend whatever is left of the key's budget, then prove the limiter refuses ordinary requests.
  let refused = 0;
  for (let i = 0; i < LIMIT + 2; i++) {
    const res = await fetch(`${app.url}/api/v1/assistants`, { headers: bearer(owner.secret) });
    await res.arrayBuffer();
    if (res.status === 429) refused++;
  }
  t.ok(refused >= 2, `the per-key limit refuses ordinary requests (${refused} refused)`);
  const mint = await post(
    app.url,
    '/api/v1/voice/sessions',
    { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] },
    bearer(owner.secret),
  );
  t.equal(mint.status, 429, 'a new mint is refused: admission stays limited');

  for (const call of calls) {
    const beat = await heartbeat(app, call);
    t.equal(beat.status, 200, 'heartbeat answered');
    t.equal(beat.body.status, 'healthy');
  }
  for (const call of calls) {
    const ended = await endWithKey(app, owner, call.sessionId);
    t.equal(ended.status, 200, `end of ${call.sessionId} is not rate-limited`);
    t.equal(ended.body.status, 'ended');
    t.notOk(ended.headers.get('ratelimit'), 'an exempt answer carries no RateLimit header (it was not counted)');
  }
  const again = await fetch(`${app.url}/api/v1/assistants`, { headers: bearer(owner.secret) });
  await again.arrayBuffer();
  t.equal(again.status, 429, 'the ends did not refill or bypass the budget of other routes');
});

t.test(
  'the exemption is a route flag, set where calls end or are supervised, and nowhere it would open admission',
  async (t) => {
    const flagged = app.app.routes
      .filter((r) => r.rateLimitExempt === true)
      .map((r) => `${r.method} ${r.path}`)
      .sort();
    t.same(flagged, ['POST /api/v1/voice/sessions/:sessionId/end', 'POST /api/v1/voice/sessions/:sessionId/heartbeat']);
  },
);
