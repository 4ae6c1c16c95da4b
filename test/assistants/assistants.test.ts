import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';

type Assistant = {
  id: string;
  publicId: string;
  name: string;
  settings: Record<string, unknown> & { voice: Record<string, unknown>; allowedDomains: string[] };
};

t.test('assistants: CRUD with both ids, settings merge, pagination, and every refusal', async (t) => {
  const { url, deps } = await startTestApp(t);
  const owner = await createOwner(deps.sql);
  const other = await createOwner(deps.sql);
  const readOnly = await createOwner(deps.sql, { scopes: ['assistants:read'] });
  const call = (method: string, path: string, secret: string | undefined, body?: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: {
        ...(secret ? bearer(secret) : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  const created = await call('POST', '/api/v1/assistants', owner.secret, {
    name: '  Support  ',
    description: 'Answers questions',
    settings: { allowedDomains: ['https://Shop.Example/', 'https://*.example.com'], voice: { enabled: true } },
  });
  t.equal(created.status, 201);
  const { assistant } = (await created.json()) as { assistant: Assistant };
  t.equal(assistant.name, 'Support', 'trimmed');
  t.match(assistant.publicId, /^asst_[0-9A-Za-z]{20}$/);
  t.match(assistant.id, /^[0-9a-f-]{36}$/, 'the internal id is a UUID');
  t.same(assistant.settings.allowedDomains, ['https://shop.example', 'https://*.example.com'], 'origins normalised');
  t.equal(assistant.settings.voice.enabled, true);
  t.equal(assistant.settings.voice.recording, 'off', 'defaults fill the rest');
  t.equal(assistant.settings['language'], 'english');

  t.test('both ids work for the owner; another account gets 404 for either', async (t) => {
    for (const id of [assistant.id, assistant.publicId]) {
      const res = await call('GET', `/api/v1/assistants/${id}`, owner.secret);
      t.equal(res.status, 200);
      t.equal(((await res.json()) as { assistant: Assistant }).assistant.id, assistant.id);
      t.equal((await call('GET', `/api/v1/assistants/${id}`, other.secret)).status, 404, `other account GET ${id}`);
      t.equal(
        (await call('PATCH', `/api/v1/assistants/${id}`, other.secret, { name: 'Hijack' })).status,
        404,
        `other account PATCH ${id}`,
      );
      t.equal(
        (await call('DELETE', `/api/v1/assistants/${id}`, other.secret)).status,
        404,
        `other account DELETE ${id}`,
      );
    }
    const list = (await (await call('GET', '/api/v1/assistants', other.secret)).json()) as { assistants: Assistant[] };
    t.same(list.assistants, [], 'never listed to another account');
    t.equal((await call('GET', '/api/v1/assistants/not-an-id', owner.secret)).status, 404);
    t.equal((await call('GET', '/api/v1/assistants/asst_doesnotexist', owner.secret)).status, 404);
  });

  t.test('401 without or with a bad key; 403 without the scope', async (t) => {
    t.equal((await call('GET', '/api/v1/assistants', undefined)).status, 401);
    t.equal((await call('GET', '/api/v1/assistants', 'sk_live_bogus')).status, 401);
    t.equal((await call('GET', `/api/v1/assistants/${assistant.id}`, undefined)).status, 401);
    t.equal((await call('POST', '/api/v1/assistants', readOnly.secret, { name: 'x' })).status, 403);
    t.equal((await call('PATCH', `/api/v1/assistants/${assistant.id}`, readOnly.secret, { name: 'x' })).status, 403);
    t.equal((await call('DELETE', `/api/v1/assistants/${assistant.id}`, readOnly.secret)).status, 403);
    const noAssistantScope = await createOwner(deps.sql, { scopes: ['chat'] });
    t.equal((await call('GET', '/api/v1/assistants', noAssistantScope.secret)).status, 403);
  });

  t.test('400 for invalid bodies, with every issue listed', async (t) => {
    const bad = await call('POST', '/api/v1/assistants', owner.secret, {
      name: '',
      settings: { allowedDomains: ['not an origin'], visitorRateLimitPerMinute: 0 },
    });
    t.equal(bad.status, 400);
    const body = (await bad.json()) as { code: string; details: { issues: Array<{ path: string }> } };
    t.equal(body.code, 'VALIDATION_FAILED');
    const paths = body.details.issues.map((i) => i.path);
    t.ok(paths.includes('body.name'));
    t.ok(paths.some((p) => p.startsWith('body.settings.allowedDomains')));
    t.ok(paths.includes('body.settings.visitorRateLimitPerMinute'));
    t.equal(
      (await call('POST', '/api/v1/assistants', owner.secret, { name: 'x', secret: 1 })).status,
      400,
      'unknown fields',
    );
    t.equal(
      (await call('PATCH', `/api/v1/assistants/${assistant.id}`, owner.secret, { settings: { language: 'klingon' } }))
        .status,
      400,
      'unknown language',
    );
    t.equal(
      (
        await call('PATCH', `/api/v1/assistants/${assistant.id}`, owner.secret, {
          settings: { voice: { recording: 'maybe' } },
        })
      ).status,
      400,
    );
  });

  t.test('PATCH replaces given fields and merges settings deeply', async (t) => {
    const res = await call('PATCH', `/api/v1/assistants/${assistant.publicId}`, owner.secret, {
      welcomeMessage: 'Hello!',
      settings: { voice: { recording: 'on' }, requireWidgetSigning: true },
    });
    t.equal(res.status, 200);
    const updated = ((await res.json()) as { assistant: Assistant }).assistant;
    t.equal(updated.settings.voice.enabled, true, 'voice.enabled kept');
    t.equal(updated.settings.voice.recording, 'on', 'voice.recording changed');
    t.equal(updated.settings['requireWidgetSigning'], true);
    t.same(
      updated.settings.allowedDomains,
      ['https://shop.example', 'https://*.example.com'],
      'untouched settings kept',
    );
    t.equal(updated.name, 'Support', 'name kept');
    const cleared = await call('PATCH', `/api/v1/assistants/${assistant.id}`, owner.secret, { description: null });
    t.equal(
      ((await cleared.json()) as { assistant: { description: string | null } }).assistant.description,
      null,
      'null clears a field',
    );
  });

  t.test('cursor pagination, newest first, limit at most 100', async (t) => {
    for (let i = 0; i < 4; i++)
      t.equal((await call('POST', '/api/v1/assistants', owner.secret, { name: `A${i}` })).status, 201);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await call('GET', `/api/v1/assistants?limit=2${cursor ? `&cursor=${cursor}` : ''}`, owner.secret);
      t.equal(res.status, 200);
      const page = (await res.json()) as { assistants: Assistant[]; nextCursor: string | null };
      t.ok(page.assistants.length <= 2);
      seen.push(...page.assistants.map((a) => a.name));
      cursor = page.nextCursor;
    } while (cursor);
    t.same(seen, ['A3', 'A2', 'A1', 'A0', 'Support'], 'every assistant once, newest first');
    t.equal((await call('GET', '/api/v1/assistants?limit=101', owner.secret)).status, 400);
    t.equal((await call('GET', '/api/v1/assistants?cursor=%%%', owner.secret)).status, 400);
  });

  t.test('DELETE removes the assistant (and answers 404 afterwards)', async (t) => {
    const res = await call('DELETE', `/api/v1/assistants/${assistant.id}`, owner.secret);
    t.equal(res.status, 200);
    t.same(await res.json(), { ok: true });
    t.equal((await call('GET', `/api/v1/assistants/${assistant.publicId}`, owner.secret)).status, 404);
    t.equal((await call('DELETE', `/api/v1/assistants/${assistant.id}`, owner.secret)).status, 404);
  });
});
