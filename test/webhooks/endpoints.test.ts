import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../../sdk/src/index.js';
import { createAssistant } from '../../src/assistants/index.js';
import { createOwner } from '../helpers/identity.js';
import { api, eventually, startReceiver, startWebhookApp, type ReceivedWebhook } from './helpers.js';

/** Verifies one received request with the reference Standard Webhooks library; returns the parsed payload. */
function verified(secret: string, hook: ReceivedWebhook): any {
  return new Webhook(secret).verify(hook.body, {
    'webhook-id': String(hook.headers['webhook-id']),
    'webhook-timestamp': String(hook.headers['webhook-timestamp']),
    'webhook-signature': String(hook.headers['webhook-signature']),
  });
}

t.test('an owner registers an endpoint; the secret is shown once; a test event verifies', async (t) => {
  const app = await startWebhookApp(t);
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);

  const created = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['voice.session.started', 'voice.session.ended'],
    description: 'CRM sync',
  });
  t.equal(created.status, 201, 'created');
  const endpoint = created.body;
  t.match(endpoint, {
    id: /^whep_/,
    url: receiver.url,
    events: ['voice.session.started', 'voice.session.ended'],
    description: 'CRM sync',
    enabled: true,
    createdAt: String,
  });
  t.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  t.ok(Buffer.from(endpoint.secret.slice(6), 'base64').length >= 24, 'at least 24 random bytes');

  const one = await api(app.url, 'GET', `/api/v1/webhook-endpoints/${endpoint.id}`, owner.secret);
  t.equal(one.status, 200);
  t.notOk('secret' in one.body, 'GET one has no secret');
  t.notOk(one.text.includes(endpoint.secret.slice(6, 30)), 'nor any part of it');
  const list = await api(app.url, 'GET', '/api/v1/webhook-endpoints', owner.secret);
  t.equal(list.body.endpoints.length, 1);
  t.notOk(list.text.includes(endpoint.secret.slice(6, 30)), 'the list shows no secret either');
  const stored = await app.database.sql`select secret_sealed from webhook_endpoints where id = ${endpoint.id}`;
  t.notOk(String(stored[0]!.secretSealed).includes(endpoint.secret.slice(6)), 'stored encrypted, not in clear');

  const test = await api(app.url, 'POST', `/api/v1/webhook-endpoints/${endpoint.id}/test`, owner.secret);
  t.equal(test.status, 202, test.text);
  await eventually(() => receiver.received.length === 1, 'the test event');
  const hook = receiver.received[0]!;
  t.equal(hook.headers['webhook-id'], test.body.delivery.messageId, 'webhook-id is the message id');
  const payload = verified(endpoint.secret, hook);
  t.equal(payload.type, 'webhook.test');
  t.match(
    await verifyWebhook(endpoint.secret, hook.headers, Buffer.from(hook.body)),
    { type: 'webhook.test' },
    'the SDK verifies it too',
  );
  t.notOk(app.logs.text().includes(endpoint.secret.slice(6)), 'the secret is never logged');
  t.ok(Date.parse(payload.timestamp) > 0, 'timestamp is ISO 8601');
  t.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(hook.body, hook.headers as any));

  const deliveries = await eventually(async () => {
    const page = await api(app.url, 'GET', `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`, owner.secret);
    return page.body.deliveries[0]?.status === 'delivered' ? page.body : undefined;
  }, 'the delivery recorded as delivered');
  t.match(deliveries.deliveries[0], {
    eventType: 'webhook.test',
    attempts: 1,
    lastStatusCode: 200,
    nextAttemptAt: null,
  });
  t.equal(deliveries.nextCursor, null);

  // Replay: the same message (same webhook-id, same body) as a new delivery.
  const replay = await api(
    app.url,
    'POST',
    `/api/v1/webhook-endpoints/${endpoint.id}/deliveries/${deliveries.deliveries[0].id}/replay`,
    owner.secret,
  );
  t.equal(replay.status, 202, replay.text);
  await eventually(() => receiver.received.length === 2, 'the replay');
  t.equal(receiver.received[1]!.headers['webhook-id'], hook.headers['webhook-id']);
  t.equal(receiver.received[1]!.body, hook.body);
  const after = await api(app.url, 'GET', `/api/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=1`, owner.secret);
  t.equal(after.body.deliveries.length, 1);
  t.type(after.body.nextCursor, 'string', 'a second page');
  const second = await api(
    app.url,
    'GET',
    `/api/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=1&cursor=${after.body.nextCursor}`,
    owner.secret,
  );
  t.not(second.body.deliveries[0].id, after.body.deliveries[0].id);
});

t.test('rotation: for a day the old and the new secret both sign', async (t) => {
  const app = await startWebhookApp(t);
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const created = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['document.processed'],
  });
  const rotated = await api(
    app.url,
    'POST',
    `/api/v1/webhook-endpoints/${created.body.id}/rotate-secret`,
    owner.secret,
  );
  t.equal(rotated.status, 200, 'rotated');
  t.not(rotated.body.secret, created.body.secret);
  await api(app.url, 'POST', `/api/v1/webhook-endpoints/${created.body.id}/test`, owner.secret);
  await eventually(() => receiver.received.length === 1, 'the test event');
  const hook = receiver.received[0]!;
  t.equal(String(hook.headers['webhook-signature']).split(' ').length, 2, 'two signatures');
  t.equal(verified(rotated.body.secret, hook).type, 'webhook.test', 'the new secret verifies');
  t.equal(verified(created.body.secret, hook).type, 'webhook.test', 'the old secret still verifies');
});

t.test('the webhooks scope, validation and ownership', async (t) => {
  const app = await startWebhookApp(t);
  const owner = await createOwner(app.database.sql);
  const other = await createOwner(app.database.sql);
  const noScope = await createOwner(app.database.sql, { scopes: ['assistants:read'] });
  const body = { url: 'https://hooks.example.com/parley', events: ['document.failed'] };
  const refused = await api(app.url, 'POST', '/api/v1/webhook-endpoints', noScope.secret, body);
  t.equal(refused.status, 403);
  t.equal(refused.body.code, 'AUTH_MISSING_SCOPE');

  const bad = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, { ...body, events: ['nope'] });
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body.details), /events/);
  const ftp = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    ...body,
    url: 'ftp://x.example',
  });
  t.equal(ftp.status, 400);
  t.equal(ftp.body.code, 'WEBHOOK_URL_NOT_ALLOWED');
  t.match(ftp.body.details, { field: 'url' });

  const created = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, body);
  t.equal(created.status, 201, 'created');
  const id = created.body.id;
  t.equal((await api(app.url, 'GET', `/api/v1/webhook-endpoints/${id}`, other.secret)).status, 404, 'not theirs');
  t.equal((await api(app.url, 'DELETE', `/api/v1/webhook-endpoints/${id}`, other.secret)).status, 404);

  const patched = await api(app.url, 'PATCH', `/api/v1/webhook-endpoints/${id}`, owner.secret, {
    events: ['document.processed', 'document.failed'],
    description: null,
    enabled: false,
  });
  t.equal(patched.status, 200, patched.text);
  t.match(patched.body, { events: ['document.processed', 'document.failed'], description: null, enabled: false });
  const test = await api(app.url, 'POST', `/api/v1/webhook-endpoints/${id}/test`, owner.secret);
  t.equal(test.status, 409);
  t.equal(test.body.code, 'WEBHOOK_ENDPOINT_DISABLED');
  for (let n = 1; n < 20; n++) {
    const more = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, body);
    t.equal(more.status, 201, `endpoint ${n + 1} of 20`);
  }
  const tooMany = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, body);
  t.equal(tooMany.status, 409, 'the 21st is refused');
  t.equal(tooMany.body.code, 'WEBHOOK_ENDPOINT_LIMIT');
  t.equal((await api(app.url, 'DELETE', `/api/v1/webhook-endpoints/${id}`, owner.secret)).status, 200);
  t.equal((await api(app.url, 'GET', `/api/v1/webhook-endpoints/${id}`, owner.secret)).status, 404);
});

t.test('a call sends voice.session.started and, once settled, voice.session.ended', async (t) => {
  const app = await startWebhookApp(t);
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const created = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['voice.session.started', 'voice.session.ended'],
  });
  const assistant = await createAssistant(
    app.database.sql,
    { accountId: owner.accountId },
    {
      name: 'Voice helper',
      instructions: 'Be brief.',
      settings: { voice: { enabled: true, recording: 'off', requireConsent: false } },
    },
  );
  const minted = await api(app.url, 'POST', '/api/v1/voice/sessions', owner.secret, {
    assistantId: assistant.publicId,
    capabilities: ['heartbeat', 'playback_gate'],
  });
  t.equal(minted.status, 200, minted.text);
  await eventually(() => receiver.received.length >= 1, 'voice.session.started');
  const ended = await api(app.url, 'POST', `/api/v1/voice/sessions/${minted.body.sessionId}/end`, owner.secret, {});
  t.equal(ended.status, 200, ended.text);
  await eventually(() => receiver.received.length >= 2, 'voice.session.ended');

  const [started, end] = receiver.received.map((hook) => verified(created.body.secret, hook));
  t.match(started, {
    type: 'voice.session.started',
    data: {
      sessionId: minted.body.sessionId,
      conversationId: minted.body.conversationId,
      assistantId: assistant.id,
      source: 'api',
      transport: 'websocket',
    },
  });
  t.match(end, {
    type: 'voice.session.ended',
    data: {
      sessionId: minted.body.sessionId,
      conversationId: minted.body.conversationId,
      endReason: ended.body.endReason ?? null,
      endedBy: 'client',
      billableSeconds: ended.body.billableSeconds,
      costMicros: Number,
    },
  });
  t.type(end.data.durationSeconds, 'number');
  t.not(receiver.received[0]!.headers['webhook-id'], receiver.received[1]!.headers['webhook-id']);
});
