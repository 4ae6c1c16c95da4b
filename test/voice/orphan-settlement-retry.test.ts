import t from 'tap';
import { TEST_SECRET_KEY } from '../helpers/app.js';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { bearer } from '../helpers/identity.js';
import { scratchDir } from '../helpers/scratch.js';
import { startKillableInstance } from '../fault/killable-instance.js';
import { heartbeat, ownerWithVoice, post, startVoiceApp, voiceAssistant, waitFor, type Minted } from './helpers.js';

/**
 * A call whose owner died is settled `lost` by a survivor. When its usage cannot be settled at that moment (the
 * database does not answer the meter in time: here its grant's row is locked past the query deadline), the settlement
 * is retried until it lands: the grant is closed with the seconds billed, and the account's next call is admitted
 * (with one concurrent call on the plan, an open grant would refuse it 429 until the grant expired).
 */
t.test("a dead owner's call: a failed usage settlement is retried until it lands", async (t) => {
  const env = { HOSTED_USAGE_ENFORCEMENT: 'enforce', DATABASE_QUERY_TIMEOUT_MS: '1500' };
  const b = await startVoiceApp(t, { env, voice: { ownership: { renewEveryMs: 250, ttlMs: 3000 } } });
  const a = await startKillableInstance(t, {
    DATABASE_URL: b.database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: b.redisPrefix,
    SECRET_KEY: TEST_SECRET_KEY,
    INSTANCE_ID: 'instance-a',
    DATA_DIR: scratchDir('parley-orphan-'),
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    ...env,
  });
  const owner = await ownerWithVoice(b);
  const assistant = await voiceAssistant(b, owner);
  const res = await post(
    a.url,
    '/api/v1/voice/sessions',
    { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] },
    bearer(owner.secret),
  );
  t.equal(res.status, 200, 'minted on A');
  const minted = res.body as Minted;
  const grants = () =>
    b.database.sql<{ status: string }[]>`
      select status from usage_reservations where voice_session_id = ${minted.sessionId}`;
  t.same(
    (await grants()).map((g) => g.status),
    ['open'],
    'the call holds an open grant',
  );

  // The grant's row is locked (a long transaction elsewhere) while A dies and B settles the call.
  const locker = await b.database.sql.reserve();
  await locker`begin`;
  await locker`select id from usage_reservations where voice_session_id = ${minted.sessionId} for update`;
  try {
    await a.kill();
    const lost = await waitFor(
      async () => {
        const hb = await heartbeat(b, minted);
        return hb.status === 200 && hb.body.status === 'lost' ? hb.body : undefined;
      },
      "A's death to be noticed",
      30_000,
    );
    t.match(lost, { status: 'lost', endReason: 'control_lost' }, 'B settles the call lost');
  } finally {
    await locker`rollback`;
    locker.release();
  }
  const statuses = await waitFor(
    async () => {
      const g = await grants();
      return g.every((x) => x.status === 'settled') ? g : undefined;
    },
    'the grant to be settled',
    15_000,
  ).catch(async () => grants());
  t.same(
    statuses!.map((g) => g.status),
    ['settled'],
    'the usage settlement was retried and closed the grant',
  );
  const next = await post(
    b.url,
    '/api/v1/voice/sessions',
    { assistantId: assistant.publicId, capabilities: ['playback_gate'] },
    bearer(owner.secret),
  );
  t.equal(next.status, 200, `the account's next call is admitted (${next.body?.code ?? next.status})`);
});
