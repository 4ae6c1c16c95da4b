import type { Test } from 'tap';
import type { Assistant } from '../../src/assistants/index.js';
import { bearer, type TestOwner } from '../helpers/identity.js';
import { balanceOf } from '../helpers/metering.js';
import type { TestApp } from '../helpers/app.js';
import type { Sql } from '../../src/db/index.js';
import type { VoiceCapabilityOptions } from '../../src/voice/index.js';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { openMedia, mediaUrl, type MediaClient } from '../voice/media-client.js';
import { ownerWithVoice, voiceAssistant, type Minted } from '../voice/helpers.js';
import { timedRequest } from './helpers.js';

/** Voice minutes are enforced, so every call holds real grants that must be settled once. */
export const FAULT_ENV = { HOSTED_USAGE_ENFORCEMENT: 'enforce' };

/** Fast ownership for fault scenarios: an outage longer than the record's life takes seconds, not minutes. */
export const FAST_OWNERSHIP: VoiceCapabilityOptions = {
  ownership: { renewEveryMs: 250, ttlMs: 1000 },
  orphanSweepEveryMs: 500,
};

/** A live call as a caller holds it: the mint's answer, its media socket, and when the caller joined. */
export interface Call {
  minted: Minted;
  media: MediaClient;
  joinedAt: number;
  owner: TestOwner;
  app: TestApp;
}

export async function voiceSetup(app: TestApp): Promise<{ owner: TestOwner; assistant: Assistant }> {
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  return { owner, assistant };
}

/** Mint with the owner's key (heartbeat + gate) and join the media socket, like an integration does. */
export async function startCall(
  t: Test,
  app: TestApp,
  owner: TestOwner,
  assistant: Assistant,
  base = app.url,
): Promise<Call> {
  const res = await timedRequest(`${base}/api/v1/voice/sessions`, {
    json: { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] },
    headers: bearer(owner.secret),
  });
  if (res.status !== 200) throw new Error(`mint failed: ${res.status} ${JSON.stringify(res.body)}`);
  const minted = res.body as Minted;
  const media = await openMedia(mediaUrl(app, minted, minted.controlToken, base));
  t.teardown(() => media.ws.terminate());
  return { minted, media, joinedAt: performance.now(), owner, app };
}

export function beat(call: Call, base = call.app.url) {
  return timedRequest(`${base}/api/v1/voice/sessions/${call.minted.sessionId}/heartbeat`, {
    json: { token: call.minted.controlToken },
  });
}

/**
 * Heartbeats once a second (the allowed rate) until `until` says stop; returns every status seen. This is what a
 * client sees through a fault.
 */
export async function heartbeatsWhile(call: Call, run: () => Promise<void>, base = call.app.url): Promise<string[]> {
  const seen: string[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const res = await beat(call, base);
      seen.push(res.status === 200 ? res.body.status : `http_${res.status}`);
      await new Promise((r) => setTimeout(r, 1050));
    }
  })();
  try {
    await run();
  } finally {
    running = false;
    await loop;
  }
  return seen;
}

/** Heartbeat until it answers `status` (bounded). */
export async function beatUntil(call: Call, status: string, timeoutMs = 10_000, base = call.app.url): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const res = await beat(call, base);
    last = res.body;
    if (res.status === 200 && res.body.status === status) return res.body;
    await new Promise((r) => setTimeout(r, 1050));
  }
  throw new Error(`heartbeat never answered ${status}; last ${JSON.stringify(last)}`);
}

export function endCall(call: Call, base = call.app.url) {
  return timedRequest(`${base}/api/v1/voice/sessions/${call.minted.sessionId}/end`, {
    json: {},
    headers: bearer(call.owner.secret),
  });
}

/**
 * What is stored for a finished call: the row settled once, every voice grant closed, and the account billed exactly
 * the row's seconds (one settlement). Returns the row.
 */
export async function assertSettledOnce(
  t: Test,
  sql: Sql,
  call: Call,
  expected: { state: 'ended' | 'lost'; billableSeconds?: number },
): Promise<any> {
  const [row] =
    await sql`select state, end_reason, billable_seconds, owner_generation from voice_sessions where id = ${call.minted.sessionId}`;
  t.equal(row!.state, expected.state, `the call is stored ${expected.state}`);
  if (expected.billableSeconds !== undefined)
    t.equal(row!.billableSeconds, expected.billableSeconds, 'the stored seconds are the ones the caller was told');
  const grants = await sql`select status from usage_reservations where voice_session_id = ${call.minted.sessionId}`;
  t.ok(
    grants.length > 0 && grants.every((g) => g.status === 'settled' || g.status === 'released'),
    'every voice grant is closed',
  );
  const [events] =
    await sql`select count(*)::int as n from usage_events e join usage_reservations r on r.id = e.reservation_id where r.voice_session_id = ${call.minted.sessionId}`;
  t.equal(events!.n, grants.filter((g) => g.status === 'settled').length, 'one usage record per settled grant');
  const balance = await balanceOf(sql, call.owner.accountId);
  t.equal(balance!.voiceSecondsUsed, row!.billableSeconds, 'the account is billed the call once');
  t.equal(balance!.voiceSecondsReserved, 0, 'nothing is left reserved');
  return row;
}

/**
 * Billed seconds match the time the caller was connected, within `toleranceS` (1 s by default). A call whose owner
 * was killed -9 can only be billed up to the owner's last persisted usage (written every renewal), so that scenario
 * allows one renewal interval more.
 */
export function assertBilledRealTime(t: Test, billed: number, realMs: number, what = 'the call', toleranceS = 1): void {
  const real = realMs / 1000;
  t.ok(
    Math.abs(billed - real) <= toleranceS,
    `${what}: billed ${billed} s for ${real.toFixed(2)} s of connected time (within ${toleranceS} s)`,
  );
}

/**
 * The simulator for a WebRTC call that outlives its owner: fast usage and transcripts, and after a re-attach it
 * replays everything it sent (as the real provider may), so a test sees that nothing is stored twice. Closed at
 * teardown.
 */
export async function startReplayingSimulator(t: Test) {
  const sim = await startVoiceSimulator({
    usageIntervalMs: 200,
    transcriptChunkMs: 100,
    wordMs: 40,
    replayCount: 1000,
  });
  t.teardown(() => sim.close());
  return sim;
}
