import t from 'tap';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { startFaultProxy, targetOf } from '../helpers/fault-proxy.js';
import { speechFrames } from '../voice/media-client.js';
import { startFaultRig } from './helpers.js';
import { assertSettledOnce, beatUntil, endCall, FAULT_ENV, heartbeatsWhile, startCall, voiceSetup } from './voice.js';

/**
 * The provider link goes half-open (the provider's traffic is held; ours still reaches it). The
 * keepalive notices within seconds, heartbeats say `degraded`, the link is resumed once traffic flows again without
 * a burst of stale assistant audio, and the silent time is not billed.
 */
t.test(
  'a half-open provider link: detected in seconds, degraded, resumed without a stale burst, silence unbilled',
  async (t) => {
    const sim = await startVoiceSimulator({ usageIntervalMs: 250 });
    t.teardown(() => sim.close());
    const providerProxy = await startFaultProxy(targetOf(sim.url, 80), t);
    const rig = await startFaultRig(t, { env: { ...FAULT_ENV, VOICE_PROVIDER_URL: providerProxy.urlFor(sim.url) } });
    const { app } = rig;
    const { owner, assistant } = await voiceSetup(app);
    const call = await startCall(t, app, owner, assistant);
    const session = app.app.voice.sessions.get(call.minted.sessionId)!;
    await beatUntil(call, 'healthy');

    // The caller speaks, so the assistant is answering (audio on its way) when the link goes half-open.
    for (const frame of speechFrames(60)) call.media.send(frame);
    await new Promise((r) => setTimeout(r, 1500));

    const HOLD_MS = 6000;
    let holdAt = 0;
    let resumedAt = 0;
    let bytesAtHeal = 0;
    const seen = await heartbeatsWhile(call, async () => {
      holdAt = performance.now();
      providerProxy.holdDownstream();
      await new Promise((r) => setTimeout(r, HOLD_MS));
      bytesAtHeal = call.media.binaryBytes();
      providerProxy.heal();
      const deadline = Date.now() + 15_000;
      while (session.linkState !== 'connected' || resumedAt === 0) {
        if (session.linkState === 'connected' && resumedAt === 0) resumedAt = performance.now();
        if (Date.now() > deadline || session.status !== 'active') break;
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    t.ok(seen.includes('degraded'), `heartbeats said degraded while the link was silent (${seen.join(', ')})`);
    const firstDegraded = seen.indexOf('degraded');
    t.ok(
      firstDegraded >= 0 && firstDegraded <= 5,
      `noticed within a few seconds (heartbeat #${firstDegraded}, one a second)`,
    );
    t.equal(session.status, 'active', 'the call goes on');
    t.ok(resumedAt > 0, 'the provider link resumed once traffic flowed');
    t.ok(sim.stats.resumes >= 1, 'by resuming the same provider session');

    await new Promise((r) => setTimeout(r, 1000));
    const burst = call.media.binaryBytes() - bytesAtHeal;
    t.ok(
      burst <= 48_000 * 2.5,
      `no burst of stale assistant audio after recovery (${burst} bytes in the ~${((performance.now() - holdAt - HOLD_MS) / 1000).toFixed(1)} s since)`,
    );
    t.equal((await beatUntil(call, 'healthy')).status, 'healthy', 'healthy again');

    const end = await endCall(call);
    const totalMs = performance.now() - call.joinedAt;
    const silentMs = resumedAt - holdAt;
    t.equal(end.status, 200);
    const expected = (totalMs - silentMs) / 1000;
    t.ok(
      Math.abs(end.body.billableSeconds - expected) <= 1.5,
      `billed ${end.body.billableSeconds} s: the ${(totalMs / 1000).toFixed(1)} s call minus ${(silentMs / 1000).toFixed(1)} s of silent link (${expected.toFixed(1)} s)`,
    );
    await assertSettledOnce(t, rig.database.sql, call, { state: 'ended', billableSeconds: end.body.billableSeconds });
  },
);
