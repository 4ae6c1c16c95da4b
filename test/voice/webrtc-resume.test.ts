import t from 'tap';
import { LiveVoiceSession } from '../../src/voice/session/live-session.js';
import type { EndReason } from '../../src/voice/end-reasons.js';
import { captureLogger } from '../helpers/log.js';

/**
 * A call taken over from a dead instance (a WebRTC call outlives its owner) is rebuilt with its mint time in the past:
 * the deadlines the dead owner watched start again at the takeover (a call older than the heartbeat-loss or idle limit
 * must not end at the survivor's first check), and billing carries on from what the dead owner persisted.
 */
t.test('a resumed call: deadlines start at the takeover, billing carries on', async (t) => {
  let now = 0;
  const ended: EndReason[] = [];
  const session = new LiveVoiceSession(
    {
      id: 'vs_resumed',
      accountId: 'acc',
      assistant: { id: 'asst', language: 'en' },
      conversationId: 'conv',
      source: 'api',
      keyless: false,
      visitorId: null,
      heartbeat: true,
      limits: {
        heartbeatLossMs: 45_000,
        maxDurationMs: 900_000,
        maxDurationWarningMs: 30_000,
        idleTimeoutMs: 120_000,
        idleCheckInMs: 20_000,
        mediaGraceMs: 15_000,
        joinTimeoutMs: 15_000,
        heartbeatMinGapMs: 1000,
        quotaCheckEveryMs: 10_000,
      },
      startedAt: 0,
      log: captureLogger().log,
    },
    {
      now: () => now,
      end: async (_s, reason) => {
        ended.push(reason);
        return {
          sessionId: 'vs_resumed',
          status: 'ended',
          endReason: reason,
          billableSeconds: 0,
          usageFinalized: false,
          keyless: false,
        };
      },
      ground: () => undefined,
      writeTurn: () => undefined,
      extendQuota: async () => true,
    },
  );
  // Minted 200 s ago; the dead owner had billed 190 s as of 2 s ago.
  now = 200_000;
  session.resume(190, 198_000);
  session.check(now);
  t.same(ended, [], 'not heartbeat_lost, idle or unjoined at the first check');
  t.equal(session.joined, true, 'the caller counts as joined');
  t.equal(Math.round(session.billableUsageSeconds()), 192, 'billed what was persisted, plus the time since');
  now = 200_000 + 44_000;
  session.check(now);
  t.same(ended, [], 'the heartbeat deadline runs from the takeover');
  now = 200_000 + 46_000;
  session.check(now);
  t.same(ended, ['heartbeat_lost'], 'and ends the call once it passes without heartbeats');
});
