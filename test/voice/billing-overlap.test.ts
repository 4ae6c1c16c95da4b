import t from 'tap';
import { offlineSession } from './offline-session.js';

/**
 * What a call is billed: the time with a caller connected AND a live provider link. Time with the caller away and
 * time with the link down are one unbilled stretch where they overlap, never subtracted twice; nothing before the
 * caller joined counts either way. Driven on the session's own clock (seconds here), no sockets.
 */
function call() {
  const { session, setNow } = offlineSession({ id: 'vs_billing' });
  let now = 0;
  const at = (seconds: number) => setNow((now = seconds * 1000));
  return {
    session,
    at,
    /** The provider's usage figure as of now (never ahead of the clock): a sign of life. */
    usage: () => session.handlers.onUsage?.({ seconds: now / 1000 } as never),
    link: (state: 'reconnecting' | 'connected') => session.handlers.onStateChange?.(state),
    billed: () => Math.round(session.billableUsageSeconds() * 10) / 10,
  };
}

t.test('the link drops while the caller is away: the overlap is not subtracted twice', async (t) => {
  const c = call();
  c.session.onMediaAttached();
  c.at(4);
  c.usage();
  c.session.onMediaDetached();
  c.at(5);
  c.usage();
  c.link('reconnecting');
  c.at(10);
  c.link('connected');
  c.at(12);
  c.session.onMediaAttached();
  c.at(16);
  await c.session.end(null);
  t.equal(c.billed(), 8, '16 s, the caller away 4-12 s (the link down 5-10 s of it): 8 s billed');
});

t.test('the link drops first and comes back while the caller is away', async (t) => {
  const c = call();
  c.session.onMediaAttached();
  c.at(3);
  c.usage();
  c.link('reconnecting');
  c.at(5);
  c.session.onMediaDetached();
  c.at(7);
  c.link('connected');
  c.at(9);
  c.session.onMediaAttached();
  c.at(12);
  await c.session.end(null);
  t.equal(c.billed(), 6, 'unbilled from 3 s (link) to 9 s (caller back): 6 s of 12');
});

t.test('a silent link detected late reaches back before the caller left', async (t) => {
  const c = call();
  c.session.onMediaAttached();
  c.at(2);
  c.usage(); // the last word from the provider
  c.at(4);
  c.session.onMediaDetached();
  c.at(6);
  c.link('reconnecting'); // silent since 2 s
  c.at(8);
  c.session.onMediaAttached();
  c.at(10);
  c.link('connected');
  c.at(14);
  await c.session.end(null);
  t.equal(c.billed(), 6, 'unbilled 2-10 s: 6 s of 14');
});

t.test('both still open when the call ends', async (t) => {
  const c = call();
  c.session.onMediaAttached();
  c.at(4);
  c.usage();
  c.session.onMediaDetached();
  c.at(5);
  c.usage();
  c.link('reconnecting');
  c.at(10);
  t.equal(c.billed(), 4, 'live: 4 s');
  await c.session.end('disconnected');
  c.at(20);
  t.equal(c.billed(), 4, 'billing stopped at the end: 4 s');
});

t.test('a link down before the caller joined is not taken off the time after the join', async (t) => {
  const c = call();
  c.at(1);
  c.link('reconnecting');
  c.at(3);
  c.session.onMediaAttached();
  c.at(5);
  c.link('connected');
  c.at(10);
  await c.session.end(null);
  t.equal(c.billed(), 5, 'joined at 3 s, the link back at 5 s: 5 s of the 7 s after the join');
});

t.test('apart, each is taken off once', async (t) => {
  const c = call();
  c.session.onMediaAttached();
  c.at(2);
  c.usage();
  c.session.onMediaDetached();
  c.at(4);
  c.session.onMediaAttached();
  c.usage();
  c.at(6);
  c.usage();
  c.link('reconnecting');
  c.at(9);
  c.link('connected');
  c.at(12);
  await c.session.end(null);
  t.equal(c.billed(), 7, '12 s less 2 s away and 3 s without the link');
});
