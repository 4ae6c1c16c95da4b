import t from 'tap';
import { createHmac } from 'node:crypto';
import { startTestApp, TEST_SECRET_KEY } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';

const SHOP = 'https://shop.example';
const app = await startTestApp(t);
const owner = await createOwner(app.deps.sql);
const created = await fetch(`${app.url}/api/v1/assistants`, {
  method: 'POST',
  headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'Signed', settings: { allowedDomains: [SHOP], requireWidgetSigning: true } }),
});
const { assistant } = (await created.json()) as { assistant: { id: string; publicId: string } };

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: SHOP, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The server-side snippet of the README: sign a visitor id with a secret (the widget secret, here also Parley's). */
function signWith(secret: string, visitorId: string, atSeconds = Math.floor(Date.now() / 1000)): string {
  const mac = createHmac('sha256', secret).update(`${assistant.publicId}:${visitorId}:${atSeconds}`).digest('hex');
  return `t=${atSeconds},v1=${mac}`;
}

const chat = (visitorId: string, signature: string | undefined, conversationId?: string) =>
  post(
    '/api/v1/chat',
    { assistantId: assistant.publicId, message: 'hello', visitorId, ...(conversationId ? { conversationId } : {}) },
    signature ? { 'x-parley-signature': signature } : {},
  );

t.test('a known visitor id is useless to anyone else', async (t) => {
  const victim = await post('/api/v1/widget/sign', { assistantId: assistant.publicId });
  t.equal(victim.status, 200);
  const first = await chat(victim.body.visitorId, victim.body.signature);
  t.equal(first.status, 200, 'the victim chats');
  const conversationId = first.body.conversationId as string;

  // The attacker learned the victim's visitor id and conversation id, not the signature.
  const signAsVictim = await post('/api/v1/widget/sign', {
    assistantId: assistant.publicId,
    visitorId: victim.body.visitorId,
  });
  t.equal(signAsVictim.status, 403, 'the sign route does not sign an id the caller chose');
  t.equal(signAsVictim.body.code, 'WIDGET_SIGNATURE_REQUIRED');
  const forged = await post(
    '/api/v1/widget/sign',
    { assistantId: assistant.publicId, visitorId: victim.body.visitorId },
    { 'x-parley-signature': signWith('not-the-key-not-the-key-not-the-key', victim.body.visitorId) },
  );
  t.equal(forged.status, 403);
  t.equal(forged.body.code, 'WIDGET_SIGNATURE_INVALID');
  t.equal((await chat(victim.body.visitorId, undefined, conversationId)).status, 403, 'cannot continue unsigned');

  // With a signature of its own (a new visitor), the victim's conversation is not the attacker's.
  const attacker = await post('/api/v1/widget/sign', { assistantId: assistant.publicId });
  const hijack = await chat(attacker.body.visitorId, attacker.body.signature, conversationId);
  t.equal(hijack.status, 404, "another visitor's conversation is not found");
  const mixed = await chat(victim.body.visitorId, attacker.body.signature, conversationId);
  t.equal(mixed.status, 403, "the attacker's signature does not cover the victim's id");
  const [row] = await app.deps.sql`select message_count from conversations where id = ${conversationId}`;
  t.equal(row!.messageCount, 2, "the victim's conversation holds only the victim's exchange");

  // The victim renews with its previous signature, even one past the skew (up to 7 days old).
  const old = signWith(TEST_SECRET_KEY, victim.body.visitorId, Math.floor(Date.now() / 1000) - 3 * 24 * 3600);
  t.equal((await chat(victim.body.visitorId, old)).status, 403, 'a 3-day-old signature is past the skew for chat');
  const renewed = await post(
    '/api/v1/widget/sign',
    { assistantId: assistant.publicId, visitorId: victim.body.visitorId },
    { 'x-parley-signature': old },
  );
  t.equal(renewed.status, 200, 'and renews it');
  t.equal(renewed.body.visitorId, victim.body.visitorId);
  t.equal((await chat(victim.body.visitorId, renewed.body.signature, conversationId)).status, 200);
  const tooOld = signWith(TEST_SECRET_KEY, victim.body.visitorId, Math.floor(Date.now() / 1000) - 8 * 24 * 3600);
  const refused = await post(
    '/api/v1/widget/sign',
    { assistantId: assistant.publicId, visitorId: victim.body.visitorId },
    { 'x-parley-signature': tooOld },
  );
  t.equal(refused.status, 403, 'an 8-day-old signature does not renew');
});

t.test("identity verification: the owner's backend signs its users with the assistant's widget secret", async (t) => {
  const issue = () => post(`/api/v1/assistants/${assistant.publicId}/widget-secret`, {}, bearer(owner.secret));
  const first = await issue();
  t.equal(first.status, 200);
  t.match(first.body, { assistantId: assistant.publicId, secret: /^wsec_/, rotatedAt: String });
  const secret = first.body.secret as string;
  const customer = 'customer-000042';
  t.equal((await chat(customer, signWith(secret, customer))).status, 200, "the owner's signature admits its user");
  const renewed = await post(
    '/api/v1/widget/sign',
    { assistantId: assistant.publicId, visitorId: customer },
    { 'x-parley-signature': signWith(secret, customer) },
  );
  t.equal(renewed.status, 200, "Parley renews an owner-signed visitor's signature");

  const second = await issue();
  t.not(second.body.secret, secret, 'issuing again rotates the secret');
  const stale = await chat(customer, signWith(secret, customer));
  t.equal(stale.status, 403, 'the previous secret stops working at once');
  t.equal(stale.body.code, 'WIDGET_SIGNATURE_INVALID');
  t.equal((await chat(customer, signWith(second.body.secret, customer))).status, 200);

  const stranger = await createOwner(app.deps.sql);
  const other = await post(`/api/v1/assistants/${assistant.publicId}/widget-secret`, {}, bearer(stranger.secret));
  t.equal(other.status, 404, "another account cannot issue this assistant's secret");
  t.notOk(app.logs.text().includes(second.body.secret), 'the secret is never logged');
});
