import t, { type Test } from 'tap';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { startFaultProxy, targetOf } from '../helpers/fault-proxy.js';
import { waitFor } from '../helpers/wait.js';
import { speechFrames } from '../voice/media-client.js';
import { startFaultRig } from './helpers.js';
import { assertSettledOnce, beatUntil, endCall, FAULT_ENV, startCall, voiceSetup, type Call } from './voice.js';

/**
 * Billing through provider faults: a call is billed the seconds its caller was connected with a live provider link
 * (within a second), however it ends: a hang-up during a provider cut, during a half-open link noticed or not yet
 * noticed, or `control_lost` when the link never comes back. The provider's own usage count stops while its link is
 * down, so it must not be what the outage is subtracted from.
 */
const sim = await startVoiceSimulator({ usageIntervalMs: 250 });
t.teardown(() => sim.close());
const providerProxy = await startFaultProxy(targetOf(sim.url, 80), t);
const rig = await startFaultRig(t, { env: { ...FAULT_ENV, VOICE_PROVIDER_URL: providerProxy.urlFor(sim.url) } });
const { app } = rig;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => (ms / 1000).toFixed(2);

/** A call of a new owner (so its account's balance is this call's alone) with some live-link time behind it. */
async function liveCall(t: Test, liveMs: number): Promise<Call> {
  const { owner, assistant } = await voiceSetup(app);
  const call = await startCall(t, app, owner, assistant);
  await beatUntil(call, 'healthy');
  for (const frame of speechFrames(40)) call.media.send(frame);
  await sleep(Math.max(0, liveMs - (performance.now() - call.joinedAt)));
  return call;
}

/** Billed within 1 s of `connectedMs`, stored once. */
async function assertBilled(t: Test, call: Call, billed: number, connectedMs: number, what: string) {
  t.ok(
    Math.abs(billed - connectedMs / 1000) <= 1,
    `${what}: billed ${billed} s for ${seconds(connectedMs)} s connected with a live link`,
  );
  await assertSettledOnce(t, rig.database.sql, call, { state: 'ended', billableSeconds: billed });
}

for (const afterCutMs of [500, 4000]) {
  t.test(`a hang-up ${afterCutMs} ms into a provider cut bills the live-link time`, async (t) => {
    const call = await liveCall(t, 4000);
    const cutAt = performance.now();
    providerProxy.refuse();
    try {
      await sleep(afterCutMs);
      const end = await endCall(call);
      t.equal(end.status, 200);
      await assertBilled(t, call, end.body.billableSeconds, cutAt - call.joinedAt, 'cut, then hang-up');
    } finally {
      providerProxy.heal();
    }
  });
}

t.test('a hang-up during a half-open link that was noticed bills the time before it went silent', async (t) => {
  const call = await liveCall(t, 4000);
  const session = app.app.voice.sessions.get(call.minted.sessionId)!;
  const holdAt = performance.now();
  providerProxy.holdDownstream();
  try {
    await beatUntil(call, 'degraded');
    t.not(session.linkState, 'connected', 'the silent link was noticed');
    await sleep(1000);
    const end = await endCall(call);
    t.equal(end.status, 200);
    await assertBilled(t, call, end.body.billableSeconds, holdAt - call.joinedAt, 'half-open, noticed');
  } finally {
    providerProxy.heal();
  }
});

t.test('a hang-up during a half-open link not yet noticed bills the call up to the hang-up', async (t) => {
  const call = await liveCall(t, 6000);
  const session = app.app.voice.sessions.get(call.minted.sessionId)!;
  providerProxy.holdDownstream();
  try {
    await sleep(300);
    t.equal(session.linkState, 'connected', 'not noticed yet');
    const hungUpAt = performance.now();
    const end = await endCall(call);
    t.equal(end.status, 200);
    // Closing waits for the provider's final usage, which never comes (up to its close timeout): not billed.
    await assertBilled(t, call, end.body.billableSeconds, hungUpAt - call.joinedAt, 'half-open, unnoticed');
    t.equal(end.body.usageFinalized, false, 'the final usage is unknown');
  } finally {
    providerProxy.heal();
  }
});

t.test('control_lost after a half-open link that never recovers bills the time before it went silent', async (t) => {
  const call = await liveCall(t, 5000);
  const session = app.app.voice.sessions.get(call.minted.sessionId)!;
  const holdAt = performance.now();
  providerProxy.holdDownstream();
  try {
    const hb = await beatUntil(call, 'ended', 40_000);
    t.equal(hb.endReason, 'control_lost');
    // The caller hears `ended` as soon as the end begins; the settlement that finishes it may still be running.
    await waitFor(() => session.status === 'ended', 'the ended call to settle', 10_000);
    const [row] = await rig.database
      .sql`select billable_seconds from voice_sessions where id = ${call.minted.sessionId}`;
    await assertBilled(t, call, row!.billableSeconds as number, holdAt - call.joinedAt, 'control_lost');
  } finally {
    providerProxy.heal();
  }
});
