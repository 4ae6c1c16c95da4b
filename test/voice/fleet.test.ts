import t from 'tap';
import type { VoiceQuota } from '../../src/voice/index.js';
import { TEST_SECRET_KEY } from '../helpers/app.js';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { startKillableInstance } from '../fault/killable-instance.js';
import { bearer } from '../helpers/identity.js';
import { heartbeat, ownerWithVoice, post, startVoiceApp, voiceAssistant, waitFor, type Minted } from './helpers.js';
import { scratchDir } from '../helpers/scratch.js';

t.test(
  "two instances, one Redis, one Postgres: 421 on the wrong one; a dead owner's sessions end lost, settled exactly once",
  async (t) => {
    const settlements: Array<{ sessionId: string; finalized: boolean }> = [];
    const quota: VoiceQuota = {
      admit: async () => undefined,
      extend: async () => true,
      settle: async (r, _s, finalized) => void settlements.push({ sessionId: r.sessionId, finalized }),
      release: async () => undefined,
    };
    // Instance B: in-process, sweeping for orphans every 500 ms.
    const b = await startVoiceApp(t, { voice: { quota, orphanSweepEveryMs: 500 } });
    // Instance A: its own process on the same database and Redis prefix, with the same SECRET_KEY.
    const a = await startKillableInstance(t, {
      DATABASE_URL: b.database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: b.redisPrefix,
      SECRET_KEY: TEST_SECRET_KEY,
      INSTANCE_ID: 'instance-a',
      DATA_DIR: scratchDir('parley-fleet-'),
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    const owner = await ownerWithVoice(b);
    const assistant = await voiceAssistant(b, owner);
    const mintOnA = async () => {
      const res = await post(
        a.url,
        '/api/v1/voice/sessions',
        { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] },
        bearer(owner.secret),
      );
      t.equal(res.status, 200, 'minted on A');
      return res.body as Minted;
    };
    const asked = await mintOnA();
    const unasked = await mintOnA();

    t.same(
      (await post(a.url, `/api/v1/voice/sessions/${asked.sessionId}/heartbeat`, { token: asked.controlToken })).body,
      { status: 'healthy', nextHeartbeatMs: 5000 },
      'the owner answers',
    );
    const wrong = await heartbeat(b, asked);
    t.equal(wrong.status, 421, 'a heartbeat that reached B is misrouted');
    t.equal(wrong.body.reason, 'misrouted');
    t.equal(wrong.body.details.instanceId, 'instance-a', 'the record says where the session lives');
    t.equal(wrong.headers.get('x-parley-instance'), 'instance-a');
    t.equal(
      (await post(b.url, `/api/v1/voice/sessions/${asked.sessionId}/gate`, { token: asked.controlToken })).status,
      421,
      'gate too',
    );
    t.equal(
      (await post(b.url, `/api/v1/voice/sessions/${asked.sessionId}/end`, {}, bearer(owner.secret))).status,
      421,
      'end too',
    );

    await a.kill();
    // Once A's presence key expires (3 s after its last write) B knows A is gone: the session is lost, although its
    // ownership record (15 s) still names A.
    const lost = await waitFor(
      async () => {
        const res = await heartbeat(b, asked);
        return res.status === 200 ? res.body : undefined;
      },
      "A's presence to expire",
      30_000,
    );
    t.same(lost, { status: 'lost', nextHeartbeatMs: 5000, endReason: 'control_lost' });

    // Many callers at once, and the sweeper: still one settlement.
    const answers = await Promise.all([
      heartbeat(b, asked),
      heartbeat(b, asked),
      post(b.url, `/api/v1/voice/sessions/${asked.sessionId}/end`, {}, bearer(owner.secret)),
      post(b.url, `/api/v1/voice/sessions/${asked.sessionId}/end`, {}, bearer(owner.secret)),
    ]);
    t.ok(
      answers.every((r) => r.status === 200),
      'everyone gets an answer',
    );
    t.match(answers[2]!.body, {
      sessionId: asked.sessionId,
      status: 'lost',
      endReason: 'control_lost',
      usageFinalized: false,
    });
    t.same(answers[3]!.body, answers[2]!.body, 'the same final answer');

    // Nobody asked about the other session: B's sweep finds it.
    await waitFor(
      async () => {
        const [row] = await b.database.sql`select state from voice_sessions where id = ${unasked.sessionId}`;
        return row!.state === 'lost';
      },
      'the sweep to settle the unasked session',
      // Nobody asks about it: the sweep settles it once its record has expired and its liveness is stale (15 s).
      30_000,
    );
    t.same((await heartbeat(b, unasked)).body, { status: 'lost', nextHeartbeatMs: 5000, endReason: 'control_lost' });

    const rows = await b.database.sql`
    select id, state, end_reason, ended_by, owner_generation from voice_sessions where id in (${asked.sessionId}, ${unasked.sessionId}) order by id`;
    for (const row of rows)
      t.match(
        row,
        { state: 'lost', endReason: 'control_lost', endedBy: 'reaper', ownerGeneration: 2 },
        'settled once (one generation bump)',
      );
    t.equal(
      settlements.filter((s) => s.sessionId === asked.sessionId).length,
      1,
      'the asked session was settled exactly once',
    );
    t.equal(
      settlements.filter((s) => s.sessionId === unasked.sessionId).length,
      1,
      'the swept session was settled exactly once',
    );
  },
);
