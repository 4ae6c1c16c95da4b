import { LiveVoiceSession, type LiveSessionInit } from '../../src/voice/session/live-session.js';
import type { EndReason } from '../../src/voice/end-reasons.js';
import { captureLogger } from '../helpers/log.js';

/**
 * A live call held in memory only: no sockets, no provider, no database. Its clock is the `now` this returns a setter
 * for, and every end it reaches is recorded in `ended`. Used by the tests that drive a session's own rules (billing,
 * deadlines, a takeover's resume) without the service around it.
 */
export function offlineSession(
  init: Partial<Omit<LiveSessionInit, 'limits'>> & { limits?: Partial<LiveSessionInit['limits']> } = {},
) {
  let now = 0;
  const ended: EndReason[] = [];
  const id = init.id ?? 'vs_offline';
  const keyless = init.keyless ?? false;
  const session = new LiveVoiceSession(
    {
      id,
      accountId: 'acc',
      assistant: { id: 'asst', language: 'en' },
      conversationId: 'conv',
      source: 'api',
      visitorId: null,
      heartbeat: false,
      startedAt: 0,
      log: captureLogger().log,
      ...init,
      keyless,
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
        ...init.limits,
      },
    },
    {
      now: () => now,
      end: async (_s, reason) => {
        ended.push(reason);
        return {
          sessionId: id,
          status: 'ended',
          endReason: reason,
          billableSeconds: 0,
          usageFinalized: false,
          keyless,
        };
      },
      ground: () => undefined,
      writeTurn: () => undefined,
      extendQuota: async () => true,
    },
  );
  return {
    session,
    ended,
    /** Sets the session's clock, in milliseconds. */
    setNow: (ms: number) => (now = ms),
  };
}
