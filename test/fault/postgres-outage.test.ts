import t from 'tap';
import { speechFrames } from '../voice/media-client.js';
import { SQL_DEADLINE_MS, startFaultRig } from './helpers.js';
import {
  assertBilledRealTime,
  assertSettledOnce,
  beatUntil,
  endCall,
  FAST_OWNERSHIP,
  FAULT_ENV,
  heartbeatsWhile,
  startCall,
  voiceSetup,
} from './voice.js';

/**
 * PostgreSQL: a live call goes on through a PostgreSQL stall longer than the ownership record's
 * life (renewal no longer waits behind the database), heartbeats say `degraded` meanwhile; a call ended while the
 * database is cut gets its final answer at once, and its usage settles exactly once when the database returns.
 */
t.test('a live call survives a PostgreSQL stall; an end during an outage settles once when it returns', async (t) => {
  const rig = await startFaultRig(t, { env: FAULT_ENV, voice: { ...FAST_OWNERSHIP, limits: { mediaGraceMs: 500 } } });
  const { app } = rig;
  const { owner, assistant } = await voiceSetup(app);
  const call = await startCall(t, app, owner, assistant);
  await beatUntil(call, 'healthy');

  await t.test('PostgreSQL stalled for 3 s (3x the record life)', async (t) => {
    const seen = await heartbeatsWhile(call, async () => {
      rig.pgProxy.stall();
      // The caller speaks, then falls silent: the provider transcribes and answers, turns to store meanwhile.
      for (const frame of speechFrames(40)) call.media.send(frame);
      for (let i = 0; i < 40; i++) call.media.send(Buffer.alloc(960));
      await new Promise((r) => setTimeout(r, 3000));
      rig.pgProxy.heal();
    });
    t.ok(seen.includes('degraded'), `heartbeats said degraded during the stall (${seen.join(', ')})`);
    t.notOk(
      seen.some((s) => s === 'ended' || s === 'lost' || s.startsWith('http_5')),
      'the call never ended; no 5xx',
    );
    await beatUntil(call, 'healthy');
    const [row] = await rig.database
      .sql`select state, owner_generation from voice_sessions where id = ${call.minted.sessionId}`;
    t.match(row, { state: 'active', ownerGeneration: 1 }, 'still active, same owner generation: nobody took it over');
    const deadline = Date.now() + 15_000;
    let stored: Array<{ role: string }> = [];
    while (Date.now() < deadline && !stored.some((m) => m.role === 'user')) {
      stored = await rig.database.sql<
        { role: string }[]
      >`select role from messages where conversation_id = ${call.minted.conversationId}`;
      await new Promise((r) => setTimeout(r, 200));
    }
    t.ok(
      stored.some((m) => m.role === 'user'),
      `what the caller said during the stall was stored once it passed (${stored.length} messages)`,
    );
    const [conversation] = await rig.database
      .sql`select message_count from conversations where id = ${call.minted.conversationId}`;
    t.equal(conversation!.messageCount, stored.length, 'each turn counted once');
  });

  await t.test('the caller hangs up while PostgreSQL is cut: ended now, settled once it is back', async (t) => {
    rig.pgProxy.refuse();
    await beatUntil(call, 'degraded');
    await new Promise((r) => setTimeout(r, 2500)); // past the API key cache: the database is needed to authenticate
    const refused = await endCall(call);
    t.equal(refused.status, 503, 'the end route cannot check the key: 503, not a hang or a 500');
    t.equal(refused.body?.code, 'DEPENDENCY_UNAVAILABLE');
    t.ok(Number(refused.headers.get('retry-after')) > 0, 'with Retry-After');
    t.ok(refused.ms < SQL_DEADLINE_MS + 1000, `within the deadline (${Math.round(refused.ms)} ms)`);

    // The caller hangs up (media socket closed): after the media grace the call ends `disconnected`.
    call.media.ws.close();
    const hungUpMs = performance.now() - call.joinedAt;
    const hb = await beatUntil(call, 'ended');
    t.equal(hb.endReason, 'disconnected', 'heartbeats say ended, disconnected (no database needed)');
    const waitUntil = Date.now() + 10_000;
    while (app.app.voice.pendingSettlements === 0 && Date.now() < waitUntil)
      await new Promise((r) => setTimeout(r, 100));
    t.equal(app.app.voice.pendingSettlements, 1, 'the settlement waits in memory');
    const [during] = await rig.database.sql`select state from voice_sessions where id = ${call.minted.sessionId}`;
    t.equal(during!.state, 'active', 'not settled yet: the database is away');

    await new Promise((r) => setTimeout(r, 2000)); // the outage goes on: retries fail, nothing is lost
    rig.pgProxy.heal();
    const deadline = Date.now() + 15_000;
    while (app.app.voice.pendingSettlements > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    t.equal(app.app.voice.pendingSettlements, 0, 'the deferred settlement landed');
    const row = await assertSettledOnce(t, rig.database.sql, call, { state: 'ended' });
    t.equal(row.endReason, 'disconnected');
    assertBilledRealTime(
      t,
      row.billableSeconds,
      hungUpMs,
      'the connected time (the media grace after the hang-up is not billed)',
    );

    // A sweep and the end route after the fact change nothing.
    await app.app.voice.sweepOrphans();
    const final = await endCall(call);
    t.equal(final.status, 200);
    t.match(
      final.body,
      { status: 'ended', endReason: 'disconnected', billableSeconds: row.billableSeconds },
      'the final answer',
    );
    await assertSettledOnce(t, rig.database.sql, call, { state: 'ended', billableSeconds: row.billableSeconds });
  });
});
