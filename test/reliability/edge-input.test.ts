import t, { type Test } from 'tap';
import { signingKeys, signWebhook } from '../../src/billing/index.js';
import { bearer } from '../helpers/identity.js';
import { call, createWorld, WIDGET_ORIGIN } from '../fuzz/world.js';

/**
 * Input PostgreSQL cannot store (NUL, lone surrogates, far dates, integers past int4) is refused at
 * the edge with 400 and a stable code, and nothing is stored. Each case answered 500 before the shell checked it.
 */
const world = await createWorld(t);
const { app, a, operatorCookie } = world;
const sql = app.database.sql;
const key = bearer(a.owner.secret);
const dash = { cookie: a.cookie, origin: app.url };
const NUL = 'bad\u0000value';
const LONE = 'bad\ud800value';

async function counts() {
  const [row] = await sql`select
    (select count(*)::int from assistants) as assistants,
    (select count(*)::int from documents) as documents,
    (select count(*)::int from conversations) as conversations,
    (select count(*)::int from messages) as messages,
    (select count(*)::int from users) as users,
    (select count(*)::int from evals) as evals,
    (select count(*)::int from voice_sessions) as voice_sessions`;
  return row!;
}

async function refused(
  t: Test,
  label: string,
  answer: Promise<{ status: number; body: any }>,
  code = 'VALIDATION_FAILED',
) {
  const res = await answer;
  t.equal(res.status, 400, `${label}: 400`);
  t.equal(res.body?.code, code, `${label}: code ${code}`);
}

t.test('NUL and lone surrogates in JSON strings are 400 and nothing is stored', async (t) => {
  const before = await counts();
  for (const [what, bad] of [
    ['NUL', NUL],
    ['lone surrogate', LONE],
  ] as const) {
    await refused(t, `${what} in assistant name`, call(app, 'POST', '/api/v1/assistants', { name: bad }, key));
    await refused(
      t,
      `${what} in assistant instructions`,
      call(app, 'PATCH', `/api/v1/assistants/${a.assistant.id}`, { instructions: bad }, key),
    );
    await refused(
      t,
      `${what} in chat message`,
      call(app, 'POST', '/api/v1/chat', { assistantId: a.assistant.id, message: bad }, key),
    );
    await refused(
      t,
      `${what} in widget chat visitorId`,
      call(
        app,
        'POST',
        '/api/v1/chat',
        { assistantId: a.assistant.publicId, message: 'hi', visitorId: bad },
        { origin: WIDGET_ORIGIN },
      ),
    );
    await refused(
      t,
      `${what} in login email`,
      call(
        app,
        'POST',
        '/api/auth/login',
        { email: `x${bad}@example.test`, password: 'whatever' },
        { origin: app.url },
      ),
    );
    await refused(
      t,
      `${what} in voice conversationId`,
      call(
        app,
        'POST',
        '/api/v1/voice/sessions',
        { assistantId: a.assistant.id, capabilities: ['playback_gate'], conversationId: bad },
        key,
      ),
    );
    await refused(
      t,
      `${what} in voice visitorId`,
      call(
        app,
        'POST',
        '/api/v1/voice/sessions',
        { assistantId: a.assistant.publicId, capabilities: ['playback_gate'], visitorId: bad },
        { origin: WIDGET_ORIGIN },
      ),
    );
    await refused(
      t,
      `${what} in source name`,
      call(app, 'POST', `/api/assistants/${a.assistant.id}/sources`, { type: 'text', name: bad, text: 'text' }, dash),
    );
    await refused(
      t,
      `${what} in eval question`,
      call(app, 'POST', `/api/assistants/${a.assistant.id}/evals`, { cases: [{ question: bad }] }, dash),
    );
    await refused(
      t,
      `${what} in an object key`,
      call(app, 'POST', '/api/v1/assistants', { name: 'ok', [bad]: 1 }, key),
    );
  }
  // A well-formed pair (an emoji) is fine.
  const ok = await call(
    app,
    'POST',
    '/api/v1/chat',
    { assistantId: a.assistant.id, message: 'Price? \ud83d\ude00' },
    key,
  );
  t.equal(ok.status, 200, 'a surrogate pair is ordinary text');
  const after = await counts();
  t.same(
    { ...after, conversations: after.conversations - 1, messages: after.messages - 2 },
    before,
    'nothing stored by the refused requests',
  );
});

t.test('deeply nested JSON is 400, not a stack overflow', async (t) => {
  for (const depth of [40, 100_000]) {
    const body = `{"name":"deep","settings":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const res = await fetch(`${app.url}/api/v1/assistants`, {
      method: 'POST',
      headers: { ...key, 'content-type': 'application/json' },
      body,
    });
    t.equal(res.status, 400, `depth ${depth}: 400`);
    t.equal(((await res.json()) as { code: string }).code, 'VALIDATION_FAILED');
  }
});

t.test('NUL in path segments, cursors and upload file names is 400', async (t) => {
  await refused(t, 'path %00', call(app, 'GET', `/api/v1/assistants/asst_%00abc`, undefined, key));
  await refused(t, 'cursor %00', call(app, 'GET', `/api/v1/assistants?cursor=abc%00def`, undefined, key));
  const nulIdCursor = Buffer.from(JSON.stringify([new Date().toISOString(), 'asst_\u0000'])).toString('base64url');
  await refused(
    t,
    'cursor holding a NUL id',
    call(app, 'GET', `/api/v1/documents?cursor=${nulIdCursor}`, undefined, key),
  );
  await refused(
    t,
    'upload ?filename=%00',
    call(app, 'POST', `/api/assistants/${a.assistant.id}/uploads?filename=a%00.txt`, undefined, dash),
  );
  const before = await counts();
  const boundary = 'fuzzboundary';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="no\u0000te.txt"\r\nContent-Type: text/plain\r\n\r\nhello world\r\n--${boundary}--\r\n`,
  );
  const res = await fetch(`${app.url}/api/assistants/${a.assistant.id}/uploads`, {
    method: 'POST',
    headers: { ...dash, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
  });
  t.equal(res.status, 400, 'multipart file name with NUL: 400');
  t.equal(((await res.json()) as { code: string }).code, 'VALIDATION_FAILED');
  t.same(await counts(), before, 'no document stored');
});

t.test('dates outside years 0001-9999 in cursors and analytics are 400', async (t) => {
  for (const far of ['+275760-09-13T00:00:00.000Z', '-271821-04-20T00:00:00.000Z', '+010000-01-01T00:00:00.000Z']) {
    const cursor = Buffer.from(JSON.stringify([far, 'asst_x'])).toString('base64url');
    await refused(t, `cursor at ${far}`, call(app, 'GET', `/api/v1/assistants?cursor=${cursor}`, undefined, key));
    await refused(
      t,
      `conversation cursor at ${far}`,
      call(app, 'GET', `/api/v1/conversations?cursor=${cursor}`, undefined, key),
    );
  }
  await refused(
    t,
    'analytics far from',
    call(
      app,
      'GET',
      `/api/v1/analytics?assistantId=${a.assistant.id}&from=-271821-04-20&to=2026-01-01`,
      undefined,
      key,
    ),
  );
  await refused(
    t,
    'analytics far to',
    call(
      app,
      'GET',
      `/api/v1/analytics?assistantId=${a.assistant.id}&from=2026-01-01&to=%2B275760-09-13`,
      undefined,
      key,
    ),
  );
});

t.test('plan entitlements above 2^31-1 are 400 and the plan is unchanged', async (t) => {
  const admin = { cookie: operatorCookie, origin: app.url };
  const before = await call(app, 'GET', '/api/admin/plans', undefined, admin);
  for (const field of ['maxAssistants', 'monthlyRequestCap', 'voiceMinutes', 'voiceConcurrentCalls']) {
    await refused(t, `${field} 2^31`, call(app, 'PATCH', '/api/admin/plans/free', { [field]: 2 ** 31 }, admin));
    await refused(t, `${field} 1e300`, call(app, 'PATCH', '/api/admin/plans/free', { [field]: 1e300 }, admin));
  }
  await refused(
    t,
    'voiceMinutes whose seconds overflow',
    call(app, 'PATCH', '/api/admin/plans/free', { voiceMinutes: 2 ** 31 - 1 }, admin),
  );
  t.equal(
    (await call(app, 'PATCH', '/api/admin/plans/starter', { maxAssistants: 2 ** 31 - 1 }, admin)).status,
    200,
    'the largest int4 is accepted',
  );
  t.same(
    (await call(app, 'GET', '/api/admin/plans', undefined, admin)).body.plans.filter(
      (p: { planCode: string }) => p.planCode === 'free',
    ),
    before.body.plans.filter((p: { planCode: string }) => p.planCode === 'free'),
  );
});

t.test('webhook payloads with far dates or NUL: never a 500, nothing stored', async (t) => {
  const secret = app.config.BILLING_WEBHOOK_SECRET!;
  const deliver = async (event: unknown, id: string) => {
    const body = JSON.stringify(event);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = signWebhook(signingKeys(secret)[0]!, id, timestamp, body);
    const res = await fetch(`${app.url}/api/webhooks/polar`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': signature,
      },
      body,
    });
    return { status: res.status, body: (await res.json()) as { code?: string } };
  };
  const subscription = (dates: Record<string, string>) => ({
    id: 'sub_far_dates',
    status: 'active',
    customer: { external_id: a.owner.accountId },
    product_id: app.config.BILLING_PRODUCT_ID_PRO,
    ...dates,
  });
  const far = await deliver(
    {
      type: 'subscription.updated',
      timestamp: '+275760-09-13T00:00:00.000Z',
      data: subscription({
        current_period_start: '-271821-04-20T00:00:00.000Z',
        current_period_end: '+275760-09-13T00:00:00.000Z',
        modified_at: '+010000-01-01T00:00:00.000Z',
      }),
    },
    'msg_far_dates',
  );
  t.ok(far.status < 500, `far dates: ${far.status} (acknowledged and ignored: the subscription is not readable)`);
  const nul = await deliver(
    { type: 'subscription.updated', data: subscription({ status: 'act\u0000ive' }) },
    'msg_nul',
  );
  t.equal(nul.status, 400, 'NUL in the payload: 400');
  t.equal(nul.body.code, 'VALIDATION_FAILED');
  const stored = await sql`select 1 from billing_subscriptions where id = 'sub_far_dates'`;
  t.equal(stored.length, 0, 'no subscription stored');
  const [account] = await sql`select plan_code from hosting_accounts where account_id = ${a.owner.accountId}`;
  t.equal(account!.planCode, 'pro', 'the plan is unchanged');
});
