import t from 'tap';
import { bearer } from '../helpers/identity.js';
import { ORIGIN, type Minted } from '../voice/helpers.js';
import { mediaUrl, openMedia } from '../voice/media-client.js';
import { startFaultRig, timedRequest } from './helpers.js';
import {
  assertBilledRealTime,
  assertSettledOnce,
  beatUntil,
  endCall,
  FAULT_ENV,
  voiceSetup,
  type Call,
} from './voice.js';

/**
 * A session whose media socket never connects ends `disconnected` after the join timeout
 * (VOICE_JOIN_TIMEOUT_SECONDS) and is billed nothing; a call that joins late is billed only from the join.
 */
t.test(
  'nobody joins: ended disconnected after the join timeout, billed 0; a late join bills from the join',
  async (t) => {
    const rig = await startFaultRig(t, { env: { ...FAULT_ENV, VOICE_JOIN_TIMEOUT_SECONDS: '2' } });
    const { app } = rig;
    const { owner, assistant } = await voiceSetup(app);

    await t.test('a widget call nobody joins', async (t) => {
      const visitorId = 'visitor-join-1';
      const res = await timedRequest(`${app.url}/api/v1/voice/sessions`, {
        json: { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'], visitorId },
        headers: { origin: ORIGIN },
      });
      t.equal(res.status, 200);
      const minted = res.body as Minted;
      const call: Call = { minted, media: undefined as never, joinedAt: 0, owner, app };
      const ended = await beatUntil(call, 'ended', 10_000);
      t.equal(ended.endReason, 'disconnected', 'heartbeat: ended, disconnected');
      const end = await timedRequest(`${app.url}/api/v1/voice/sessions/${minted.sessionId}/end`, {
        json: { visitorId },
        headers: { origin: ORIGIN },
      });
      t.equal(end.status, 200);
      t.match(
        end.body,
        { status: 'ended', endReason: 'disconnected', billableSeconds: 0 },
        'the end answer says so: disconnected, nothing billed',
      );
      const [row] = await rig.database
        .sql`select state, end_reason, billable_seconds, usage_seconds from voice_sessions where id = ${minted.sessionId}`;
      t.match(
        row,
        { state: 'ended', endReason: 'disconnected', billableSeconds: 0 },
        'stored: ended disconnected, 0 s billed',
      );
      t.ok(row!.usageSeconds >= 1.5, `while the provider counted ${row!.usageSeconds} s`);
      await assertSettledOnce(t, rig.database.sql, call, { state: 'ended', billableSeconds: 0 });
    });

    await t.test('an API call that joins 1.5 s after the mint', async (t) => {
      const res = await timedRequest(`${app.url}/api/v1/voice/sessions`, {
        json: { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] },
        headers: bearer(owner.secret),
      });
      t.equal(res.status, 200);
      const minted = res.body as Minted;
      await new Promise((r) => setTimeout(r, 1500));
      const media = await openMedia(mediaUrl(app, minted));
      t.teardown(() => media.ws.terminate());
      const call: Call = { minted, media, joinedAt: performance.now(), owner, app };
      await new Promise((r) => setTimeout(r, 3000)); // past the join timeout: a joined call goes on
      t.equal((await beatUntil(call, 'healthy')).status, 'healthy', 'still live after the join timeout');
      const end = await endCall(call);
      const realMs = performance.now() - call.joinedAt;
      t.equal(end.status, 200);
      assertBilledRealTime(t, end.body.billableSeconds, realMs, 'billed from the join, not from the mint');
      // The balance now holds both calls; the first billed 0, so the account's seconds are this call's.
      await assertSettledOnce(t, rig.database.sql, call, { state: 'ended', billableSeconds: end.body.billableSeconds });
    });
  },
);
