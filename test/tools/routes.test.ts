import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { api, orderStatusTool } from './helpers.js';

t.test('owner REST for tools: validation, the secret once, rotation, limits, isolation', async (t) => {
  const app = await startTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const owner = await createOwner(app.database.sql);
  const other = await createOwner(app.database.sql);
  const made = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Shop' });
  const assistant = made.body.assistant;
  const base = `/api/v1/assistants/${assistant.publicId}/tools`;

  const first = await api(app.url, 'POST', base, owner.secret, orderStatusTool('http://127.0.0.1:9/tools'));
  t.equal(first.status, 201, first.text);
  t.match(first.body.tool, {
    id: /^tool_/,
    assistantId: assistant.id,
    name: 'order_status',
    timeoutMs: 10_000,
    mode: 'sync',
    messages: { start: 'Checking your order...' },
    examples: ['status of order {orderId}', 'where is order {orderId}'],
  });
  t.match(first.body.secret, /^whsec_[A-Za-z0-9+/]+=*$/, "the assistant's tool secret, with its first tool");
  const secret: string = first.body.secret;
  const [sealed] = await app.database.sql`select secret_sealed from assistant_tool_secrets`;
  t.notOk(String(sealed!.secretSealed).includes(secret.slice(6)), 'sealed at rest, not in clear');

  const second = await api(app.url, 'POST', base, owner.secret, {
    ...orderStatusTool('http://127.0.0.1:9/tools'),
    name: 'book_slot',
    mode: 'async',
    timeoutMs: 1000,
  });
  t.equal(second.status, 201);
  t.notOk('secret' in second.body, 'the secret is not shown again with later tools');

  const listed = await api(app.url, 'GET', base, owner.secret);
  t.same(
    listed.body.tools.map((x: { name: string }) => x.name),
    ['order_status', 'book_slot'],
  );
  t.notOk(listed.text.includes(secret.slice(6, 30)), 'no secret in the list');

  const taken = await api(app.url, 'POST', base, owner.secret, orderStatusTool('http://127.0.0.1:9/tools'));
  t.match(taken, { status: 409, body: { code: 'TOOL_NAME_TAKEN', details: { field: 'name' } } });

  const bad = async (body: Record<string, unknown>, path: RegExp) => {
    const res = await api(app.url, 'POST', base, owner.secret, { ...orderStatusTool('https://x.example/t'), ...body });
    t.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)} is refused`);
    t.equal(res.body.code, 'VALIDATION_FAILED');
    t.ok(
      res.body.details.issues.some((i: { path: string }) => path.test(i.path)),
      `the issue names ${path}: ${JSON.stringify(res.body.details.issues)}`,
    );
  };
  await bad({ name: 'OrderStatus' }, /^body\.name$/);
  await bad({ timeoutMs: 500 }, /^body\.timeoutMs$/);
  await bad({ timeoutMs: 60_001 }, /^body\.timeoutMs$/);
  await bad({ mode: 'later' }, /^body\.mode$/);
  await bad({ parameters: { type: 'string' } }, /^body\.parameters$/);
  await bad(
    { parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[0-9]+$' } } } },
    /^body\.parameters\.properties\.orderId\.pattern$/,
  );
  await bad(
    { parameters: { type: 'object', properties: { n: { type: 'bigint' } } }, examples: [] },
    /^body\.parameters\.properties\.n\.type$/,
  );
  await bad(
    { parameters: { type: 'object', properties: { a: { type: 'string' } }, required: ['b'] }, examples: [] },
    /^body\.parameters\.required$/,
  );
  await bad({ examples: ['status of order {order}'] }, /^body\.examples\.0$/);
  await bad({ messages: { delayed: [{ afterMs: -1, text: 'Still looking' }] } }, /^body\.messages\.delayed/);

  const patched = await api(app.url, 'PATCH', `${base}/${first.body.tool.id}`, owner.secret, {
    timeoutMs: 20_000,
    examples: ['order {orderId} status'],
  });
  t.equal(patched.status, 200, patched.text);
  t.match(patched.body.tool, { timeoutMs: 20_000, examples: ['order {orderId} status'], name: 'order_status' });
  const renamedOnto = await api(app.url, 'PATCH', `${base}/${second.body.tool.id}`, owner.secret, {
    name: 'order_status',
  });
  t.equal(renamedOnto.body.code, 'TOOL_NAME_TAKEN');

  // Another account sees nothing: the assistant is 404 to it, and so are its tools.
  t.equal((await api(app.url, 'GET', base, other.secret)).status, 404);
  t.equal((await api(app.url, 'GET', `${base}/${first.body.tool.id}`, other.secret)).status, 404);
  t.equal((await api(app.url, 'DELETE', `${base}/${first.body.tool.id}`, other.secret)).status, 404);
  t.equal((await api(app.url, 'POST', `${base}/rotate-secret`, other.secret, {})).status, 404);
  t.equal((await api(app.url, 'GET', `${base}/tool_nope`, owner.secret)).body.code, 'TOOL_NOT_FOUND');

  const rotated = await api(app.url, 'POST', `${base}/rotate-secret`, owner.secret, {});
  t.equal(rotated.status, 200, rotated.text);
  t.match(rotated.body.secret, /^whsec_/);
  t.not(rotated.body.secret, secret, 'a new secret');
  const overlap = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now();
  t.ok(overlap > 23.9 * 3_600_000 && overlap <= 24 * 3_600_000, 'the old one signs beside it for 24 hours');

  t.equal((await api(app.url, 'DELETE', `${base}/${second.body.tool.id}`, owner.secret)).status, 200);
  t.equal((await api(app.url, 'GET', `${base}/${second.body.tool.id}`, owner.secret)).status, 404);
  t.notOk(app.logs.text().includes(secret.slice(6)), 'the secret is never logged');
  t.notOk(app.logs.text().includes(rotated.body.secret.slice(6)), 'nor the new one');
});

t.test('at most 32 tools per assistant; rotate-secret needs a first tool', async (t) => {
  const app = await startTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const owner = await createOwner(app.database.sql);
  const { body } = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Busy' });
  const base = `/api/v1/assistants/${body.assistant.id}/tools`;
  t.equal((await api(app.url, 'POST', `${base}/rotate-secret`, owner.secret, {})).body.code, 'TOOL_NO_SECRET');
  const made = await Promise.all(
    Array.from({ length: 33 }, (_, i) =>
      api(app.url, 'POST', base, owner.secret, { ...orderStatusTool('http://127.0.0.1:9/t'), name: `tool_${i}` }),
    ),
  );
  t.equal(made.filter((r) => r.status === 201).length, 32, 'concurrent creations stop at 32');
  t.match(
    made.find((r) => r.status !== 201),
    { status: 409, body: { code: 'TOOL_LIMIT', details: { maxTools: 32 } } },
  );
  t.equal(made.filter((r) => r.body.secret !== undefined).length, 1, 'one secret, however many were created at once');
});

t.test('a tool URL: https on a public address only, unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true', async (t) => {
  const app = await startTestApp(t);
  const owner = await createOwner(app.database.sql);
  const { body } = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Strict' });
  const base = `/api/v1/assistants/${body.assistant.id}/tools`;
  for (const url of [
    'http://127.0.0.1:8080/tools',
    'https://127.0.0.1/tools',
    'https://10.1.2.3/tools',
    'https://[::1]/tools',
    'https://localhost/tools',
    'https://169.254.169.254/latest',
    'http://example.com/tools',
    'https://user:pass@example.com/tools',
    'ftp://example.com/tools',
  ]) {
    const res = await api(app.url, 'POST', base, owner.secret, orderStatusTool(url));
    t.match(res, { status: 400, body: { code: 'TOOL_URL_NOT_ALLOWED', details: { field: 'url' } } }, url);
  }
  const ok = await api(app.url, 'POST', base, owner.secret, orderStatusTool('https://93.184.215.14/tools'));
  t.equal(ok.status, 201, 'a public https address is accepted');
});
