import t from 'tap';
import { openMedia, mediaUrl } from '../voice/media-client.js';
import { mintAsWidget, ORIGIN, type Minted } from '../voice/helpers.js';
import { SQL_DEADLINE_MS, startFaultRig, timedRequest } from './helpers.js';
import { assertSettledOnce, beatUntil, FAST_OWNERSHIP, FAULT_ENV, voiceSetup } from './voice.js';

/**
 * A widget visitor's hang-up while PostgreSQL is down: the call this instance runs ends at once from memory (no 503,
 * no lingering until the media grace), and its settlement lands once the database is back, billed the connected time.
 */
t.test('a keyless hang-up during a PostgreSQL outage ends the call from memory', async (t) => {
  const rig = await startFaultRig(t, {
    env: FAULT_ENV,
    voice: { ...FAST_OWNERSHIP, limits: { mediaGraceMs: 10_000 } },
  });
  const { app } = rig;
  const { owner, assistant } = await voiceSetup(app);
  const mint = await mintAsWidget(app, assistant);
  t.equal(mint.status, 200, 'a widget visitor minted a call');
  const minted = mint.body as Minted;
  const media = await openMedia(mediaUrl(app, minted, minted.controlToken));
  t.teardown(() => media.ws.terminate());
  const joinedAt = performance.now();
  const call = { minted, media, joinedAt, owner, app };
  await beatUntil(call, 'healthy');

  rig.pgProxy.refuse();
  await beatUntil(call, 'degraded');
  const hungUpAt = performance.now();
  const end = await timedRequest(`${app.url}/api/v1/voice/sessions/${minted.sessionId}/end`, {
    json: { visitorId: 'visitor-0001' },
    headers: { origin: ORIGIN },
  });
  t.equal(end.status, 200, `the hang-up answers 200 (${JSON.stringify(end.body)})`);
  t.match(end.body, { sessionId: minted.sessionId, status: 'ended', endReason: null });
  t.ok(
    end.ms < SQL_DEADLINE_MS + 1000 + 1000,
    `from memory, within the settlement's deadline (${Math.round(end.ms)} ms)`,
  );
  const hb = await beatUntil(call, 'ended', 3000);
  t.equal(hb.endReason, null, 'heartbeats say the caller ended it (not disconnected after the media grace)');
  t.equal(app.app.voice.pendingSettlements, 1, 'the settlement waits in memory');

  rig.pgProxy.heal();
  const deadline = Date.now() + 15_000;
  while (app.app.voice.pendingSettlements > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.equal(app.app.voice.pendingSettlements, 0, 'the deferred settlement landed');
  const row = await assertSettledOnce(t, rig.database.sql, call, {
    state: 'ended',
    billableSeconds: end.body.billableSeconds,
  });
  t.equal(row.endReason, null);
  // The caller was connected until the server ended the call: after the hang-up was sent, before its answer came.
  const answeredAt = hungUpAt + end.ms;
  t.ok(
    row.billableSeconds >= (hungUpAt - joinedAt) / 1000 - 1 &&
      row.billableSeconds <= (answeredAt - joinedAt) / 1000 + 1,
    `billed ${row.billableSeconds} s for ${((hungUpAt - joinedAt) / 1000).toFixed(2)}-${((answeredAt - joinedAt) / 1000).toFixed(2)} s connected`,
  );
});
