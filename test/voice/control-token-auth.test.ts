import t from 'tap';
import { voiceCapability } from '../../src/voice/index.js';
import { issueControlToken } from '../../src/voice/session/control-token.js';
import { startTestApp, TEST_SECRET_KEY } from '../helpers/app.js';

/**
 * A control-token route is protected by its authenticator, not by its handler remembering to check: the
 * authenticator verifies the body's token against the path's session (a wrong one is the same 404 as an unknown
 * session), and every control-token route runs it, after its body is read and before its handler.
 */
const app = await startTestApp(t);
const parts = voiceCapability(app.deps);
const authenticate = parts.authenticators['control-token']!;
const sessionId = 'vs_' + 'a'.repeat(24);

const ctxOf = (token: unknown) =>
  ({ params: { sessionId }, body: { token }, route: { path: '', method: 'POST', auth: 'control-token' } }) as never;

t.test('the authenticator refuses a wrong, expired or missing token with 404', async (t) => {
  const meta = { path: '', method: 'POST', auth: 'control-token' } as never;
  for (const [what, token] of [
    ['wrong', 'v1.9999999999.' + 'A'.repeat(43)],
    ['expired', issueControlToken(TEST_SECRET_KEY, sessionId, Date.now() - 1000)],
    ["another session's", issueControlToken(TEST_SECRET_KEY, 'vs_' + 'b'.repeat(24), Date.now() + 60_000)],
    ['missing', undefined],
  ] as const) {
    await t.rejects(
      Promise.resolve().then(() => authenticate(ctxOf(token), meta)),
      { status: 404, code: 'VOICE_SESSION_NOT_FOUND' },
      `${what} token: 404`,
    );
  }
  const good = issueControlToken(TEST_SECRET_KEY, sessionId, Date.now() + 60_000);
  t.match(await authenticate(ctxOf(good), meta), { sessionId }, 'the right token names its session');
});

t.test('every control-token route authenticates before its handler, after reading the body', async (t) => {
  const guarded = parts.routes.filter((r) => r.auth === 'control-token');
  t.ok(guarded.length >= 2, `${guarded.length} control-token routes (heartbeat, gate)`);
  for (const route of guarded) {
    t.equal(route.deferAuth, true, `${route.path}: the body (with the token) is read before authenticating`);
    let reachedService = false;
    const service = parts.service as unknown as Record<'heartbeat' | 'openGate', () => Promise<never>>;
    service.heartbeat = service.openGate = async () => {
      reachedService = true;
      throw new Error('the service was reached');
    };
    const refused = Object.assign(new Error('refused by the authenticator'), { status: 404 });
    const ctx = {
      params: { sessionId },
      body: { token: 'v1.1.x' },
      authenticate: async () => {
        throw refused;
      },
    } as never;
    await t.rejects(
      Promise.resolve().then(() => route.handler(ctx)),
      refused,
      `${route.path}: refused`,
    );
    t.notOk(reachedService, `${route.path}: the handler's work never ran`);
  }
});
