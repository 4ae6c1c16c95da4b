import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import { HANDBOOK_MD, makePdf, waitForDocument } from '../documents/fixtures.js';
import { LOCAL_LABEL, VOICE_UNAVAILABLE_NOTE } from '../../src/providers/chat/index.js';
import { parseSse } from './helpers.js';

const SHOP = 'https://shop.example';

t.test(
  'a new owner: assistant, Markdown and PDF, ready, then answers by API (JSON and SSE) and keylessly',
  async (t) => {
    const { url, deps } = await startTestApp(t);
    const owner = await createOwner(deps.sql);
    const cookie = await login(url, owner.email, owner.password);
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        headers: {
          ...bearer(owner.secret),
          'content-type': 'application/json',
          ...(init.headers as Record<string, string>),
        },
      });

    const created = await api('/api/v1/assistants', {
      method: 'POST',
      body: JSON.stringify({
        name: 'Shop helper',
        welcomeMessage: 'Hi!',
        settings: { allowedDomains: [SHOP], visitorRateLimitPerMinute: 3 },
      }),
    });
    t.equal(created.status, 201);
    const { assistant } = (await created.json()) as { assistant: { id: string; publicId: string } };
    t.match(assistant.publicId, /^asst_/);

    // Upload a Markdown file (raw body + ?filename=) and a PDF (multipart), both through the dashboard.
    const md = await fetch(`${url}/api/assistants/${assistant.publicId}/uploads?filename=handbook.md`, {
      method: 'POST',
      headers: { ...dashboardHeaders(url, cookie), 'content-type': 'text/markdown' },
      body: HANDBOOK_MD,
    });
    t.equal(md.status, 201, 'markdown upload accepted');
    const mdDoc = ((await md.json()) as { document: { id: string; status: string } }).document;
    t.equal(mdDoc.status, 'pending');

    const form = new FormData();
    form.append(
      'file',
      new Blob([makePdf(['Shipping policy', 'Orders ship within two business days from our Lisbon warehouse.'])], {
        type: 'application/pdf',
      }),
      'shipping.pdf',
    );
    const pdf = await fetch(`${url}/api/assistants/${assistant.id}/uploads`, {
      method: 'POST',
      headers: { cookie, origin: url },
      body: form,
    });
    t.equal(pdf.status, 201, 'pdf upload accepted');
    const pdfDoc = ((await pdf.json()) as { document: { id: string; mimeType: string } }).document;
    t.equal(pdfDoc.mimeType, 'application/pdf');

    const getDoc = async (id: string) =>
      (
        (await (await api(`/api/v1/documents/${id}`)).json()) as {
          document: { status: string; error: string | null; chunkCount: number };
        }
      ).document;
    const mdReady = await waitForDocument(() => getDoc(mdDoc.id));
    const pdfReady = await waitForDocument(() => getDoc(pdfDoc.id));
    t.equal(mdReady.status, 'ready', `markdown ready (${mdReady.error})`);
    t.equal(pdfReady.status, 'ready', `pdf ready (${pdfReady.error})`);

    // JSON by API key, with the internal id.
    const json = await api('/api/v1/chat', {
      method: 'POST',
      body: JSON.stringify({ assistantId: assistant.id, message: 'How long do I have to ask for a refund?' }),
    });
    t.equal(json.status, 200);
    const answer = (await json.json()) as {
      answer: string;
      outcome: string;
      sources: Array<{ documentId: string; name: string; snippet: string }>;
      messageId: string;
      conversationId: string;
    };
    t.equal(answer.outcome, 'answered');
    t.equal(answer.sources[0]?.documentId, mdDoc.id, 'the best source is the handbook');
    t.match(answer.answer, /30 days/, 'the answer quotes the refund rule');
    t.ok(answer.answer.startsWith(LOCAL_LABEL), 'the offline answer says it is quoted, not generated');

    // SSE by API key, with the public id: tokens, then meta, then done.
    const sse = await api('/api/v1/chat', {
      method: 'POST',
      headers: { accept: 'text/event-stream' },
      body: JSON.stringify({ assistantId: assistant.publicId, message: 'When do orders ship from the warehouse?' }),
    });
    t.equal(sse.status, 200);
    t.match(sse.headers.get('content-type'), /text\/event-stream/);
    const events = parseSse(await sse.text());
    const names = events.map((e) => e.event);
    t.ok(names.filter((n) => n === 'token').length > 1, 'several token events');
    t.same(names.slice(-2), ['meta', 'done'], 'meta then done, last');
    t.ok(names.indexOf('meta') > names.lastIndexOf('token'), 'meta after every token');
    const meta = events.find((e) => e.event === 'meta')!.data as {
      sources: Array<{ documentId: string }>;
      outcome: string;
      messageId: string;
    };
    t.equal(meta.outcome, 'answered');
    t.equal(meta.sources[0]?.documentId, pdfDoc.id, 'the shipping answer points at the PDF');
    const streamed = events
      .filter((e) => e.event === 'token')
      .map((e) => (e.data as { text: string }).text)
      .join('');
    t.match(streamed, /two business days/);

    // Keyless from an allowed Origin (public id only).
    const keyless = (body: object, headers: Record<string, string> = { origin: SHOP }) =>
      fetch(`${url}/api/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const visitor = 'visitor-0001';
    const ok = await keyless({
      assistantId: assistant.publicId,
      message: 'Do you offer gift wrapping?',
      visitorId: visitor,
    });
    t.equal(ok.status, 200);
    t.equal(ok.headers.get('access-control-allow-origin'), SHOP);
    const okBody = (await ok.json()) as { sources: Array<{ documentId: string }> };
    t.equal(okBody.sources[0]?.documentId, mdDoc.id);

    const wrongOrigin = await keyless(
      { assistantId: assistant.publicId, message: 'hello there', visitorId: visitor },
      { origin: 'https://evil.example' },
    );
    t.equal(wrongOrigin.status, 403, 'a disallowed Origin gets 403');
    const noOrigin = await keyless({ assistantId: assistant.publicId, message: 'hello there', visitorId: visitor }, {});
    t.equal(noOrigin.status, 403, 'no Origin gets 403');
    const internalId = await keyless({ assistantId: assistant.id, message: 'hello there', visitorId: visitor });
    t.equal(internalId.status, 404, 'keyless callers cannot use the internal id');

    // The visitor limit is 3 per minute: one used above; two more pass, the next is a plain 429.
    t.equal((await keyless({ assistantId: assistant.publicId, message: 'refund?', visitorId: visitor })).status, 200);
    t.equal((await keyless({ assistantId: assistant.publicId, message: 'refund?', visitorId: visitor })).status, 200);
    const limited = await keyless({ assistantId: assistant.publicId, message: 'refund?', visitorId: visitor });
    t.equal(limited.status, 429, 'a visitor over the limit gets 429');
    t.ok(Number(limited.headers.get('retry-after')) >= 1, 'with Retry-After');
    const limitedBody = (await limited.json()) as { reason?: string; error: string };
    t.notOk('reason' in limitedBody, 'a plain 429 has no reason');
    t.notMatch(limitedBody.error, /plan|usage|billing|quota/i, 'never mentions plans or usage');
    t.equal(
      (await keyless({ assistantId: assistant.publicId, message: 'refund?', visitorId: 'visitor-0002' })).status,
      200,
      'another visitor still passes',
    );

    // The conversation was stored with its messages and sources.
    const conv = await api(`/api/v1/conversations/${answer.conversationId}`);
    t.equal(conv.status, 200);
    const convBody = (await conv.json()) as {
      conversation: { source: string; messageCount: number };
      messages: Array<{ role: string; sources: unknown[]; outcome: string | null }>;
    };
    t.equal(convBody.conversation.source, 'api');
    t.equal(convBody.messages.length, 2);
    t.same(
      convBody.messages.map((m) => m.role),
      ['user', 'assistant'],
    );
    t.equal(convBody.messages[1]!.outcome, 'answered');
    t.ok(convBody.messages[1]!.sources.length > 0);
  },
);

t.test('chat refusals: 401, 403, 404, 400, 503; voiceUnavailable; no_answer; conversations continue', async (t) => {
  const { url, deps } = await startTestApp(t);
  const owner = await createOwner(deps.sql);
  const other = await createOwner(deps.sql);
  const noChat = await createOwner(deps.sql, { scopes: ['assistants:read'] });
  const post = (secret: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}/api/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret ? bearer(secret) : {}), ...headers },
      body: JSON.stringify(body),
    });
  const mk = async (secret: string, body: object) =>
    (
      (await (
        await fetch(`${url}/api/v1/assistants`, {
          method: 'POST',
          headers: { ...bearer(secret), 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json()) as { assistant: { id: string; publicId: string } }
    ).assistant;
  const mine = await mk(owner.secret, { name: 'Mine', settings: { allowedDomains: [SHOP] } });
  const theirs = await mk(other.secret, { name: 'Theirs' });

  t.equal((await post('sk_live_notakey', { assistantId: mine.publicId, message: 'hi' })).status, 401, 'invalid key');
  t.equal(
    (await post(noChat.secret, { assistantId: mine.publicId, message: 'hi' })).status,
    403,
    'key without chat scope',
  );
  t.equal(
    (await post(owner.secret, { assistantId: theirs.id, message: 'hi' })).status,
    404,
    "another account's assistant (internal id)",
  );
  t.equal(
    (await post(owner.secret, { assistantId: theirs.publicId, message: 'hi' })).status,
    404,
    "another account's assistant (public id)",
  );
  const invalid = await post(owner.secret, { assistantId: mine.id, message: '' });
  t.equal(invalid.status, 400);
  t.equal(((await invalid.json()) as { code: string }).code, 'VALIDATION_FAILED');
  t.equal(
    (await post(owner.secret, { assistantId: mine.id, message: 'x'.repeat(4001) })).status,
    400,
    'message too long',
  );
  t.equal((await post(owner.secret, { assistantId: mine.id, message: 'hi', unknown: 1 })).status, 400, 'unknown field');

  // Nothing in the knowledge: no_answer, and it shows in the stored outcome.
  const none = await post(owner.secret, { assistantId: mine.id, message: 'What is the airspeed of a swallow?' });
  t.equal(none.status, 200);
  const noneBody = (await none.json()) as { outcome: string; sources: unknown[]; conversationId: string };
  t.equal(noneBody.outcome, 'no_answer');
  t.same(noneBody.sources, []);

  // voiceUnavailable: a neutral sentence, no reason, and the flag is stored nowhere.
  const voice = await post(
    undefined,
    {
      assistantId: mine.publicId,
      message: 'Why did the call stop?',
      voiceUnavailable: true,
      visitorId: 'visitor-voice-1',
    },
    { origin: SHOP },
  );
  t.equal(voice.status, 200);
  const voiceBody = (await voice.json()) as { answer: string; conversationId: string };
  t.ok(voiceBody.answer.includes(VOICE_UNAVAILABLE_NOTE), 'says neutrally that voice is not available');
  t.notMatch(voiceBody.answer, /usage|limit|plan|minutes|billing/i, 'gives no reason');
  const stored = await deps.sql`select * from messages where conversation_id = ${voiceBody.conversationId}`;
  t.notMatch(JSON.stringify(stored), /voiceUnavailable|voice_unavailable/, 'the flag is not stored');

  // Continue a conversation: same assistant; another visitor cannot.
  const next = await post(owner.secret, {
    assistantId: mine.id,
    message: 'And another thing?',
    conversationId: noneBody.conversationId,
  });
  t.equal(next.status, 200);
  t.equal(((await next.json()) as { conversationId: string }).conversationId, noneBody.conversationId);
  t.equal(
    (await post(owner.secret, { assistantId: mine.id, message: 'x', conversationId: 'conv_doesnotexist' })).status,
    404,
  );
  const hijack = await post(
    undefined,
    {
      assistantId: mine.publicId,
      message: 'hi',
      conversationId: voiceBody.conversationId,
      visitorId: 'visitor-other-2',
    },
    { origin: SHOP },
  );
  t.equal(hijack.status, 404, "a keyless visitor cannot continue another visitor's conversation");

  // An assistant that selects the openai provider on a deployment without one: 503.
  const openaiAssistant = await mk(owner.secret, { name: 'Needs a model', settings: { chatProvider: 'openai' } });
  const unconfigured = await post(owner.secret, { assistantId: openaiAssistant.id, message: 'hi' });
  t.equal(unconfigured.status, 503);
  t.equal(((await unconfigured.json()) as { code: string }).code, 'CHAT_PROVIDER_NOT_CONFIGURED');
});

t.test('signed visitor identity when the assistant requires it', async (t) => {
  const { url, deps } = await startTestApp(t);
  const owner = await createOwner(deps.sql);
  const res = await fetch(`${url}/api/v1/assistants`, {
    method: 'POST',
    headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Signed', settings: { allowedDomains: [SHOP], requireWidgetSigning: true } }),
  });
  const { assistant } = (await res.json()) as { assistant: { publicId: string } };
  const chat = (headers: Record<string, string>, visitorId = 'visitor-signed-1') =>
    fetch(`${url}/api/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: SHOP, ...headers },
      body: JSON.stringify({ assistantId: assistant.publicId, message: 'hello', visitorId }),
    });
  const unsigned = await chat({});
  t.equal(unsigned.status, 403);
  t.equal(((await unsigned.json()) as { code: string }).code, 'WIDGET_SIGNATURE_REQUIRED');

  const sign = await fetch(`${url}/api/v1/widget/sign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: SHOP },
    body: JSON.stringify({ assistantId: assistant.publicId }),
  });
  t.equal(sign.status, 200);
  const { signature, visitorId } = (await sign.json()) as { signature: string; visitorId: string };
  t.match(signature, /^t=\d+,v1=[0-9a-f]{64}$/);
  t.equal((await chat({ 'x-parley-signature': signature }, visitorId)).status, 200, 'a signed visitor passes');
  const forged = await chat({ 'x-parley-signature': signature }, 'visitor-signed-2');
  t.equal(forged.status, 403, 'the signature is bound to its visitor id');
  t.equal(((await forged.json()) as { code: string }).code, 'WIDGET_SIGNATURE_INVALID');
  const stale = signature.replace(/^t=\d+/, `t=${Math.floor(Date.now() / 1000) - 3600}`);
  t.equal((await chat({ 'x-parley-signature': stale }, visitorId)).status, 403, 'an old or altered signature fails');
});

t.test(
  'source playground is granted only to the signed-in owner on the same origin; others get their real source',
  async (t) => {
    const { url, deps } = await startTestApp(t);
    const owner = await createOwner(deps.sql);
    const cookie = await login(url, owner.email, owner.password);
    const created = await fetch(`${url}/api/v1/assistants`, {
      method: 'POST',
      headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Playground check', settings: { allowedDomains: [SHOP] } }),
    });
    const { assistant } = (await created.json()) as { assistant: { id: string; publicId: string } };
    const chat = async (body: object, headers: Record<string, string>) => {
      const res = await fetch(`${url}/api/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      t.equal(res.status, 200, `chat answered (${JSON.stringify(headers).slice(0, 40)})`);
      const { conversationId } = (await res.json()) as { conversationId: string };
      const conv = await fetch(`${url}/api/v1/conversations/${conversationId}`, { headers: bearer(owner.secret) });
      return ((await conv.json()) as { conversation: { source: string } }).conversation.source;
    };
    const ask = { message: 'Hello there', source: 'playground' };
    t.equal(
      await chat({ ...ask, assistantId: assistant.publicId, visitorId: 'visitor-pg-1' }, { origin: SHOP }),
      'widget',
      'keyless asking for playground is a widget visitor',
    );
    t.equal(
      await chat({ ...ask, assistantId: assistant.id }, bearer(owner.secret)),
      'api',
      'an API key asking for playground is api',
    );
    t.equal(
      await chat({ ...ask, assistantId: assistant.publicId, visitorId: 'visitor-pg-2' }, { cookie, origin: SHOP }),
      'widget',
      "the owner's cookie from another origin does not make a playground caller",
    );
    t.equal(
      await chat({ ...ask, assistantId: assistant.id }, dashboardHeaders(url, cookie)),
      'playground',
      "the signed-in owner on Parley's origin is the playground",
    );
    t.equal(
      await chat({ message: 'Hello there', assistantId: assistant.id }, dashboardHeaders(url, cookie)),
      'api',
      'the owner without asking: api, as before',
    );
  },
);
