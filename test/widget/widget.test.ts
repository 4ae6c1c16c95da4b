import t from 'tap';
import { isOriginAllowed } from '../../src/widget/index.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';

const SHOP = 'https://shop.example';

t.test('origin matching: exact origins and subdomain wildcards, scheme and port included', async (t) => {
  const allowed = ['https://shop.example', 'https://*.example.com', 'http://localhost:5173'];
  t.ok(isOriginAllowed('https://shop.example', allowed));
  t.ok(isOriginAllowed('https://SHOP.example', allowed), 'case-insensitive');
  t.ok(isOriginAllowed('https://a.example.com', allowed));
  t.ok(isOriginAllowed('https://a.b.example.com', allowed));
  t.ok(isOriginAllowed('http://localhost:5173', allowed));
  t.notOk(isOriginAllowed('https://example.com', allowed), 'the wildcard does not cover the apex');
  t.notOk(isOriginAllowed('https://evilexample.com', allowed));
  t.notOk(isOriginAllowed('https://example.com.evil.net', allowed));
  t.notOk(isOriginAllowed('http://shop.example', allowed), 'another scheme');
  t.notOk(isOriginAllowed('https://shop.example:8443', allowed), 'another port');
  t.notOk(isOriginAllowed('http://localhost:3000', allowed));
  t.notOk(isOriginAllowed('null', allowed));
  t.notOk(isOriginAllowed(undefined, allowed));
  t.notOk(isOriginAllowed('https://shop.example', []), 'an empty list allows nobody');
});

t.test('widget routes: config, sign and feedback behind the policy', async (t) => {
  const { url, deps } = await startTestApp(t);
  const owner = await createOwner(deps.sql);
  const create = async (body: object) =>
    (
      (await (
        await fetch(`${url}/api/v1/assistants`, {
          method: 'POST',
          headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json()) as { assistant: { id: string; publicId: string } }
    ).assistant;
  const assistant = await create({
    name: 'Widget bot',
    welcomeMessage: 'Welcome!',
    settings: { allowedDomains: [SHOP], voice: { enabled: true } },
  });
  const closed = await create({ name: 'No keyless' });
  const limited = await create({ name: 'Busy', settings: { allowedDomains: [SHOP], assistantRateLimitPerMinute: 2 } });
  const get = (publicId: string, origin?: string) =>
    fetch(`${url}/api/v1/widget/${publicId}/config`, { headers: origin ? { origin } : {} });
  const post = (path: string, body: unknown, origin: string | undefined = SHOP) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(origin ? { origin } : {}) },
      body: JSON.stringify(body),
    });

  t.test('config', async (t) => {
    const res = await get(assistant.publicId, SHOP);
    t.equal(res.status, 200);
    t.same(await res.json(), {
      assistantId: assistant.publicId,
      name: 'Widget bot',
      welcomeMessage: 'Welcome!',
      voice: { enabled: true, recording: 'off', requireConsent: true, transports: ['webrtc', 'websocket'] },
      requireWidgetSigning: false,
    });
    t.equal(res.headers.get('access-control-allow-origin'), SHOP);
    const preflight = await fetch(`${url}/api/v1/widget/${assistant.publicId}/config`, {
      method: 'OPTIONS',
      headers: { origin: SHOP, 'access-control-request-method': 'GET' },
    });
    t.equal(preflight.status, 204, 'CORS preflight answered');
    const refused = await get(assistant.publicId, 'https://evil.example');
    t.equal(refused.status, 403, 'disallowed origin');
    const body = (await refused.json()) as { code: string; error: string };
    t.equal(body.code, 'WIDGET_ORIGIN_NOT_ALLOWED');
    t.match(
      body.error,
      /add https:\/\/evil\.example to the assistant's allowed domains in the dashboard/,
      'says what to do',
    );
    t.notMatch(JSON.stringify(body), /plan|billing|usage|quota|upgrade/i, 'and never names plans or billing');
    t.equal((await get(assistant.publicId)).status, 403, 'no origin');
    t.equal((await get(closed.publicId, SHOP)).status, 403, 'an empty allowlist means no keyless access');
    t.equal((await get(assistant.id, SHOP)).status, 404, 'the internal id is not a widget id');
    t.equal((await get('asst_nope', SHOP)).status, 404);
  });

  t.test('per-assistant rate limit: a plain 429 without a word about plans', async (t) => {
    t.equal((await get(limited.publicId, SHOP)).status, 200);
    t.equal((await get(limited.publicId, SHOP)).status, 200);
    const res = await get(limited.publicId, SHOP);
    t.equal(res.status, 429);
    t.ok(res.headers.get('retry-after'));
    const body = (await res.json()) as Record<string, unknown>;
    t.equal(body['code'], 'WIDGET_RATE_LIMITED');
    t.notOk('reason' in body);
    t.notMatch(JSON.stringify(body), /plan|usage|billing|remaining/i);
  });

  t.test('sign', async (t) => {
    const res = await post('/api/v1/widget/sign', { assistantId: assistant.publicId });
    t.equal(res.status, 200);
    const body = (await res.json()) as { visitorId: string; timestamp: number; signature: string };
    t.match(body.visitorId, /^v_[0-9a-f]{32}$/, 'a new visitor gets an id Parley made up');
    t.ok(Math.abs(body.timestamp - Date.now() / 1000) < 5);
    t.match(body.signature, new RegExp(`^t=${body.timestamp},v1=[0-9a-f]{64}$`));
    t.equal(
      (await post('/api/v1/widget/sign', { assistantId: assistant.publicId, visitorId: 'short' })).status,
      400,
      'visitorId 8–80 chars',
    );
    t.equal(
      (await post('/api/v1/widget/sign', { assistantId: assistant.publicId, visitorId: 'visitor-abc-123' })).status,
      403,
      'an id the caller chose is not signed without its previous signature',
    );
    t.equal(
      (await post('/api/v1/widget/sign', { assistantId: assistant.publicId }, 'https://evil.example')).status,
      403,
    );
    t.equal((await post('/api/v1/widget/sign', { assistantId: 'asst_missing' })).status, 404);
  });

  t.test('feedback', async (t) => {
    const chat = await post('/api/v1/chat', {
      assistantId: assistant.publicId,
      message: 'hello',
      visitorId: 'visitor-fb-0001',
    });
    t.equal(chat.status, 200);
    const { messageId } = (await chat.json()) as { messageId: string };
    const ok = await post('/api/v1/feedback', { messageId, rating: 'positive', visitorId: 'visitor-fb-0001' });
    t.equal(ok.status, 200);
    const body = (await ok.json()) as { ok: boolean; feedback: { messageId: string; rating: string } };
    t.equal(body.ok, true);
    t.same({ messageId: body.feedback.messageId, rating: body.feedback.rating }, { messageId, rating: 'positive' });
    const changed = await post('/api/v1/feedback', { messageId, rating: 'negative', visitorId: 'visitor-fb-0001' });
    t.equal(
      ((await changed.json()) as { feedback: { rating: string } }).feedback.rating,
      'negative',
      'a new rating replaces the old',
    );
    const [{ n }] = (await deps.sql<
      Array<{ n: number }>
    >`select count(*) as n from message_feedback where message_id = ${messageId}`) as unknown as [{ n: number }];
    t.equal(n, 1, 'one rating per answer');

    t.equal(
      (await post('/api/v1/feedback', { messageId, rating: 'positive', visitorId: 'visitor-fb-9999' })).status,
      404,
      'another visitor cannot rate it',
    );
    t.equal(
      (
        await post(
          '/api/v1/feedback',
          { messageId, rating: 'positive', visitorId: 'visitor-fb-0001' },
          'https://evil.example',
        )
      ).status,
      403,
      'disallowed origin',
    );
    t.equal(
      (await post('/api/v1/feedback', { messageId: 'msg_nope', rating: 'positive' })).status,
      404,
      'unknown message',
    );
    t.equal((await post('/api/v1/feedback', { messageId, rating: 'meh' })).status, 400, 'invalid rating');
    t.equal((await post('/api/v1/feedback', {})).status, 400, 'missing fields');
  });
});
