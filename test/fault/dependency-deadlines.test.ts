import t, { type Test } from 'tap';
import { bearer } from '../helpers/identity.js';
import { ORIGIN, ownerWithVoice, voiceAssistant } from '../voice/helpers.js';
import { SQL_DEADLINE_MS, STORE_DEADLINE_MS, startFaultRig, timedRequest, type Timed } from './helpers.js';
import { READINESS_DEADLINE_MS } from '../../src/health/routes.js';

/**
 * When Redis or PostgreSQL fails, every request answers within a bounded time with 503
 * DEPENDENCY_UNAVAILABLE (Retry-After), never a 500 and never a hang; /readyz answers 503 within its deadline.
 * Each fault is healed afterwards and the same requests succeed again.
 */
t.test('Redis stalled, Redis refusing, PostgreSQL stalled, PostgreSQL cut: bounded 503s, then recovery', async (t) => {
  const rig = await startFaultRig(t);
  const { app } = rig;
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);

  const mint = () =>
    timedRequest(`${app.url}/api/v1/voice/sessions`, {
      json: { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] },
      headers: bearer(owner.secret),
    });
  const keylessChat = (n: number) =>
    timedRequest(`${app.url}/api/v1/chat`, {
      json: { assistantId: assistant.publicId, message: `Is anyone there? (${n})`, visitorId: `visitor-${n}` },
      headers: { origin: ORIGIN },
    });
  const keyChat = () =>
    timedRequest(`${app.url}/api/v1/chat`, {
      json: { assistantId: assistant.publicId, message: 'Hello?' },
      headers: bearer(owner.secret),
    });
  const ready = () => timedRequest(`${app.url}/readyz`);

  // The bound a caller can rely on: a few dependency deadlines (a request makes a handful of calls, each bounded).
  const bound = 3 * SQL_DEADLINE_MS + 1000;
  const expectUnavailable = (t: Test, res: Timed, what: string, dependency?: string) => {
    t.not(res.status, 0, `${what}: answered (no hang)`);
    t.not(res.status, 500, `${what}: never a 500`);
    t.ok(res.ms < bound, `${what}: answered within ${bound} ms (took ${Math.round(res.ms)})`);
    if (res.status === 503) {
      t.equal(res.body?.code, 'DEPENDENCY_UNAVAILABLE', `${what}: a stable code`);
      if (dependency) t.equal(res.body?.details?.dependency, dependency, `${what}: names the dependency`);
      t.ok(Number(res.headers.get('retry-after')) > 0, `${what}: Retry-After`);
    }
  };
  const expectNotReady = (t: Test, res: Timed, failed: string) => {
    t.equal(res.status, 503, '/readyz: 503');
    t.ok(res.body?.details?.failed?.includes(failed), `/readyz names ${failed}`);
    t.ok(res.ms < READINESS_DEADLINE_MS + 1000, `/readyz answered within its deadline (took ${Math.round(res.ms)} ms)`);
  };
  const expectHealthy = async (t: Test) => {
    const deadline = Date.now() + 15_000;
    let last: Timed | undefined;
    while (Date.now() < deadline) {
      last = await ready();
      if (last.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    t.equal(last?.status, 200, 'ready again after healing');
    const minted = await mint();
    t.equal(minted.status, 200, 'a mint works again');
    if (minted.status === 200) {
      const end = await timedRequest(`${app.url}/api/v1/voice/sessions/${minted.body.sessionId}/end`, {
        json: {},
        headers: bearer(owner.secret),
      });
      t.equal(end.status, 200, 'and ends');
    }
    // A pooled connection broken by the fault is replaced when it is next used: the first chat after the heal may
    // meet one and answer a bounded 503; within a few seconds chats work again.
    let chat = await keylessChat(99);
    for (let i = 0; chat.status === 503 && i < 10; i++) {
      await new Promise((r) => setTimeout(r, 300));
      chat = await keylessChat(99);
    }
    t.equal(chat.status, 200, `a keyless chat works again (${chat.status === 200 ? 'ok' : JSON.stringify(chat.body)})`);
  };

  await t.test('baseline', async (t) => {
    t.equal((await ready()).status, 200);
    await expectHealthy(t);
  });

  await t.test('Redis stalled', async (t) => {
    rig.redisProxy.stall();
    const [m, c, r] = await Promise.all([mint(), keylessChat(1), ready()]);
    expectUnavailable(t, m, 'mint', 'store');
    t.equal(m.status, 503, 'the mint cannot claim ownership: 503');
    expectUnavailable(t, c, 'keyless chat', 'store');
    t.equal(c.status, 503, 'keyless chat cannot rate-limit: 503');
    expectNotReady(t, r, 'store');
    t.ok(STORE_DEADLINE_MS < bound);
    rig.redisProxy.heal();
    await expectHealthy(t);
  });

  await t.test('Redis refusing connections (killed)', async (t) => {
    await rig.redis.kill();
    const [m, c, r] = await Promise.all([mint(), keylessChat(2), ready()]);
    expectUnavailable(t, m, 'mint', 'store');
    t.equal(m.status, 503);
    expectUnavailable(t, c, 'keyless chat', 'store');
    t.equal(c.status, 503);
    expectNotReady(t, r, 'store');
    await rig.redis.start();
    await expectHealthy(t);
  });

  await t.test('PostgreSQL stalled', async (t) => {
    rig.pgProxy.stall();
    const [m, c, k, r] = await Promise.all([mint(), keylessChat(3), keyChat(), ready()]);
    for (const [res, what] of [
      [m, 'mint'],
      [c, 'keyless chat'],
      [k, 'chat with a key'],
    ] as const) {
      expectUnavailable(t, res, what);
      t.equal(res.status, 503, `${what}: 503`);
    }
    expectNotReady(t, r, 'database');
    rig.pgProxy.heal();
    await expectHealthy(t);
  });

  await t.test('PostgreSQL cut (connections reset, new ones refused)', async (t) => {
    rig.pgProxy.refuse();
    const [m, c, k, r] = await Promise.all([mint(), keylessChat(4), keyChat(), ready()]);
    for (const [res, what] of [
      [m, 'mint'],
      [c, 'keyless chat'],
      [k, 'chat with a key'],
    ] as const) {
      expectUnavailable(t, res, what, 'database');
      t.equal(res.status, 503, `${what}: 503`);
    }
    expectNotReady(t, r, 'database');
    rig.pgProxy.heal();
    await expectHealthy(t);
  });

  // Nothing minted during a fault was left behind: no active session, nothing billed for a refused mint.
  const rows = await rig.database
    .sql`select state, count(*)::int as n from voice_sessions group by state order by state`;
  t.notOk(
    rows.some((r) => r.state === 'active'),
    'no session is left active',
  );
});
