import t from 'tap';
import { offlineSession } from './offline-session.js';

/**
 * A call taken over from a dead instance runs before its provider's sideband is attached again: the session has no
 * provider session yet, and says so (undefined), rather than a field typed as always set that is not. Supervision
 * that would speak (the idle check-in) does not throw meanwhile.
 */
t.test('a session whose provider is not attached yet', async (t) => {
  const { session, setNow } = offlineSession({
    id: 'vs_unattached',
    source: 'widget',
    keyless: true,
    visitorId: 'v',
    limits: { quotaCheckEveryMs: 1_000_000 },
  });
  session.resume(10, 0);
  t.equal(session.providerSession, undefined, 'no provider session yet, and the type says it may be absent');
  setNow(101_000); // past the idle check-in (120 s - 20 s)
  t.doesNotThrow(() => session.check(101_000), 'the idle check-in waits for a provider instead of throwing');
  t.throws(() => session.provider, /not attached/, 'asking for the provider where it must exist says why it cannot');
});
