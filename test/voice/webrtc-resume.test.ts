import t from 'tap';
import { offlineSession } from './offline-session.js';

/**
 * A call taken over from a dead instance (a WebRTC call outlives its owner) is rebuilt with its mint time in the past:
 * the deadlines the dead owner watched start again at the takeover (a call older than the heartbeat-loss or idle limit
 * must not end at the survivor's first check), and billing carries on from what the dead owner persisted.
 */
t.test('a resumed call: deadlines start at the takeover, billing carries on', async (t) => {
  const { session, ended, setNow } = offlineSession({ id: 'vs_resumed', heartbeat: true });
  // Minted 200 s ago; the dead owner had billed 190 s as of 2 s ago.
  const now = setNow(200_000);
  session.resume(190, 198_000);
  session.check(now);
  t.same(ended, [], 'not heartbeat_lost, idle or unjoined at the first check');
  t.equal(session.joined, true, 'the caller counts as joined');
  t.equal(Math.round(session.billableUsageSeconds()), 192, 'billed what was persisted, plus the time since');
  session.check(setNow(200_000 + 44_000));
  t.same(ended, [], 'the heartbeat deadline runs from the takeover');
  session.check(setNow(200_000 + 46_000));
  t.same(ended, ['heartbeat_lost'], 'and ends the call once it passes without heartbeats');
});
