import t from 'tap';
import { LiveVoiceSession } from '../../src/voice/session/live-session.js';
import { captureLogger } from '../helpers/log.js';

/**
 * A call taken over from a dead instance runs before its provider's sideband is attached again: the session has no
 * provider session yet, and says so (undefined), rather than a field typed as always set that is not. Supervision
 * that would speak (the idle check-in) does not throw meanwhile.
 */
t.test('a session whose provider is not attached yet', async (t) => {
  let now = 0;
  const session = new LiveVoiceSession(
    {
      id: 'vs_unattached',
      accountId: 'acc',
      assistant: { id: 'asst', language: 'en' },
      conversationId: 'conv',
      source: 'widget',
      keyless: true,
      visitorId: 'v',
      heartbeat: false,
      limits: {
        heartbeatLossMs: 45_000,
        maxDurationMs: 900_000,
        maxDurationWarningMs: 30_000,
        idleTimeoutMs: 120_000,
        idleCheckInMs: 20_000,
        mediaGraceMs: 15_000,
        joinTimeoutMs: 15_000,
        heartbeatMinGapMs: 1000,
        quotaCheckEveryMs: 1_000_000,
      },
      startedAt: 0,
      log: captureLogger().log,
    },
    {
      now: () => now,
      end: async (_s, reason) => ({
        sessionId: 'vs_unattached',
        status: 'ended',
        endReason: reason,
        billableSeconds: 0,
        usageFinalized: false,
        keyless: true,
      }),
      ground: () => undefined,
      writeTurn: () => undefined,
      extendQuota: async () => true,
    },
  );
  session.resume(10, 0);
  t.equal(session.providerSession, undefined, 'no provider session yet, and the type says it may be absent');
  now = 101_000; // past the idle check-in (120 s - 20 s)
  t.doesNotThrow(() => session.check(now), 'the idle check-in waits for a provider instead of throwing');
  t.throws(() => session.provider, /not attached/, 'asking for the provider where it must exist says why it cannot');
});
