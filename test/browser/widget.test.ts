import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { buildWidget } from '../../web/widget/build.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { launchBrowser, makeSpeechWav, widgetHook } from '../helpers/browser.js';
import { bearer, dashboardHeaders, login } from '../helpers/identity.js';
import { HANDBOOK_MD, waitForDocument } from '../documents/fixtures.js';
import { ownerWithVoice, post, voiceAssistant, waitFor } from '../voice/helpers.js';
import { events, hostSite, openHost, until } from './host-site.js';

/**
 * <parley-assistant> in Debian's chromium, embedded with the two-line snippet on a host page of its own origin
 * (another loopback port, on the assistant's allowlist) under a strict CSP, against the whole service and its voice
 * simulator. The fake microphone plays an espeak-ng sentence. Page code is passed as strings (the project's
 * typecheck has no DOM library).
 */

const voiceStates = async (page: Page) => (await events(page, 'parley:state')).map((d) => d.voice as string);
const visitorOf = (page: Page) => page.evaluate(`localStorage.getItem('parley:visitor-id')`) as Promise<string>;
const stateIs = (state: string) =>
  `window.__parley.some((e) => e.type === 'parley:state' && e.detail.voice === ${JSON.stringify(state)})`;

async function uploadHandbook(
  t: Test,
  app: TestApp,
  owner: Awaited<ReturnType<typeof ownerWithVoice>>,
  publicId: string,
): Promise<void> {
  const cookie = await login(app.url, owner.email, owner.password);
  const res = await fetch(`${app.url}/api/assistants/${publicId}/uploads?filename=handbook.md`, {
    method: 'POST',
    headers: { ...dashboardHeaders(app.url, cookie), 'content-type': 'text/markdown' },
    body: HANDBOOK_MD,
  });
  t.equal(res.status, 201, 'the handbook is uploaded');
  const { document } = (await res.json()) as { document: { id: string } };
  const doc = await waitForDocument(
    async () =>
      (
        (await (
          await fetch(`${app.url}/api/v1/documents/${document.id}`, { headers: bearer(owner.secret) })
        ).json()) as { document: { status: string; error: string | null } }
      ).document,
  );
  t.equal(doc.status, 'ready');
}

t.test('the widget in Chromium: voice, chat, and clear errors', async (t) => {
  await buildWidget();
  const app = await startTestApp(t);
  const host = await hostSite(t, app.url);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { settings: { allowedDomains: [host.origin] } });
  const wav = await makeSpeechWav(t, 'Hello there. When are you open tomorrow?');
  const browser = await launchBrowser(t, { fakeAudioWav: wav });

  await t.test('voice: listening, the spoken answer is heard, captions only while the gate is open, end', async (t) => {
    const page = await openHost(browser, host.url(assistant.publicId));
    await page.getByRole('button', { name: 'Start voice call' }).click();
    await until(page, stateIs('listening'), 'listening');
    const hook = await widgetHook(page);
    t.match(hook.session?.sessionId, /^vs_/, 'a voice session was minted');
    t.ok(app.app.voice.sessions.has(hook.session.sessionId), 'and runs on the service');

    // The simulator hears the espeak sentence, then answers in words and audio once its turn opens the gate.
    await until(
      page,
      `(() => { const h = document.querySelector('parley-assistant').parleyTest; return h.audibleSamples >= 3 && h.timeline.some((e) => e.kind === 'caption' && e.value.startsWith('assistant:')); })()`,
      'the assistant heard and captioned',
    );
    const heard = await widgetHook(page);
    t.ok(
      heard.maxOutputRms > 0.01,
      `a non-silent signal reached the AudioContext destination (max RMS ${heard.maxOutputRms.toFixed(3)})`,
    );
    const timeline = heard.timeline as Array<{ kind: string; value: string }>;
    const assistantCaptions = timeline.filter((e) => e.kind === 'caption' && e.value.startsWith('assistant:'));
    t.ok(assistantCaptions.length > 0, 'assistant captions were shown');
    t.same(
      assistantCaptions.filter((e) => !e.value.endsWith(':open')),
      [],
      'every assistant caption was shown while the gate was open',
    );
    const firstOpen = timeline.findIndex((e) => e.kind === 'gate' && e.value === 'open');
    t.ok(
      firstOpen >= 0 && firstOpen < timeline.findIndex((e) => e.kind === 'caption' && e.value.startsWith('assistant:')),
      'the gate opened before the first assistant caption',
    );
    t.ok(
      timeline.some((e) => e.kind === 'caption' && e.value.startsWith('user:')),
      "the visitor's words were captioned",
    );
    const messages = await events(page, 'parley:message');
    t.ok(
      messages.some((m) => m.role === 'assistant' && m.text.length > 0),
      'parley:message carried the assistant captions',
    );
    t.ok((await voiceStates(page)).includes('speaking'), 'the state went through speaking');
    const captions = page.locator('parley-assistant .captions');
    t.equal(await captions.getAttribute('aria-live'), 'polite', 'captions are an aria-live region');

    const relay = () => app.app.voice.media?.relays.get(hook.session.sessionId);
    const mute = page.getByRole('button', { name: 'Mute microphone' });
    await mute.click();
    t.equal(
      await page.getByRole('button', { name: 'Unmute microphone' }).getAttribute('aria-pressed'),
      'true',
      'mute is a pressed toggle',
    );
    await waitFor(() => relay()?.stats.mutes === 1, 'the service to hear of the mute');
    const framesMuted = relay()!.stats.callerFrames;
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.equal(relay()!.stats.callerFrames, framesMuted, 'no microphone frames leave the page while muted');
    await page.getByRole('button', { name: 'Unmute microphone' }).click();
    await waitFor(
      () => relay()?.stats.unmutes === 1 && relay()!.stats.callerFrames > framesMuted,
      'frames again after unmute',
    );

    await page.getByRole('button', { name: 'End call' }).click();
    await until(page, `window.__parley.some((e) => e.type === 'parley:ended')`, 'parley:ended');
    t.same((await events(page, 'parley:ended'))[0], { endReason: null }, 'ended by the visitor');
    t.equal((await voiceStates(page)).at(-1), 'ended');
    await waitFor(() => !app.app.voice.sessions.has(hook.session.sessionId), 'the session ended at the service');
    const final = await post(
      app.url,
      `/api/v1/voice/sessions/${hook.session.sessionId}/end`,
      { visitorId: await visitorOf(page) },
      { origin: host.origin },
    );
    t.match(final.body, { status: 'ended', endReason: null }, 'the service says the visitor ended it');
    t.ok(await page.getByRole('button', { name: 'Start voice call' }).isVisible(), 'a new call can be started');
    await page.close();
  });

  await t.test('voice: leaving the page ends the call (keepalive end)', async (t) => {
    const page = await openHost(browser, host.url(assistant.publicId));
    await page.getByRole('button', { name: 'Start voice call' }).click();
    await until(page, stateIs('listening'), 'listening');
    const { session } = await widgetHook(page);
    const visitorId = await visitorOf(page);
    await page.goto('about:blank');
    await waitFor(() => !app.app.voice.sessions.has(session.sessionId), 'the call ended when the page went away');
    const final = await post(
      app.url,
      `/api/v1/voice/sessions/${session.sessionId}/end`,
      { visitorId },
      { origin: host.origin },
    );
    t.match(final.body, { status: 'ended', endReason: null }, 'ended by the client, not by a timeout');
    await page.close();
  });

  await t.test('chat: a streamed answer with its sources, and feedback', async (t) => {
    await uploadHandbook(t, app, owner, assistant.publicId);
    const page = await openHost(browser, host.url(assistant.publicId));
    await page.getByRole('textbox', { name: 'Message' }).fill('How long do I have to ask for a refund?');
    const chatRequest = page.waitForRequest((r) => r.url().endsWith('/api/v1/chat') && r.method() === 'POST');
    await page.getByRole('button', { name: 'Send' }).click();
    const body = (await chatRequest).postDataJSON();
    t.match(body, {
      assistantId: assistant.publicId,
      message: 'How long do I have to ask for a refund?',
      source: 'widget',
    });
    t.match(body.visitorId, /^v_/, 'a visitor id kept in localStorage');
    t.notOk('voiceUnavailable' in body);
    await until(
      page,
      `window.__parley.some((e) => e.type === 'parley:message' && e.detail.role === 'assistant' && e.detail.final)`,
      'the answer',
    );
    const answers = (await events(page, 'parley:message')).filter((m) => m.role === 'assistant');
    t.ok(answers.length >= 2 && answers.some((m) => !m.final), 'the answer streamed in pieces');
    t.match(answers.at(-1).text, /30 days/, 'from the handbook');
    t.ok(await page.getByText('handbook.md').isVisible(), 'its source is shown');
    t.notMatch(answers.at(-1).text, /quoted, no AI model|Source:/, 'no internal preamble, no repeated source line');
    t.equal(await page.getByText('handbook.md').count(), 1, 'the source is named once');
    const feedback = page.waitForResponse((r) => r.url().endsWith('/api/v1/feedback'));
    await page.getByRole('button', { name: 'Helpful', exact: true }).click();
    t.equal((await feedback).status(), 200, 'feedback recorded');
    t.equal(await page.getByRole('button', { name: 'Helpful', exact: true }).getAttribute('aria-pressed'), 'true');
    await page.close();
  });

  await t.test('the JavaScript API: open(), close(), sendMessage(), startVoice(), endVoice()', async (t) => {
    const page = await openHost(browser, host.url(assistant.publicId));
    const el = `document.querySelector('parley-assistant')`;
    const panel = page.getByRole('region', { name: 'Assistant' });
    const radius = await page.evaluate(
      `getComputedStyle(${el}.shadowRoot.querySelector('.panel')).borderTopLeftRadius`,
    );
    t.equal(radius, '14px', "styled under a CSP with style-src 'none' (a constructable stylesheet)");
    await page.evaluate(`${el}.close()`);
    t.notOk(await panel.isVisible(), 'close() collapses');
    await page.evaluate(`${el}.open()`);
    t.ok(await panel.isVisible(), 'open() expands');
    await page.evaluate(`${el}.sendMessage('Do you offer gift wrapping?')`);
    const answer = (await events(page, 'parley:message')).filter((m) => m.role === 'assistant' && m.final).at(-1);
    t.ok(answer !== undefined && answer.text.length > 0, 'sendMessage() resolves once the answer is complete');
    const dotShown = `getComputedStyle(${el}.shadowRoot.querySelector('.dot')).display !== 'none'`;
    t.notOk(await page.evaluate(dotShown), 'no unlabelled status dot before a call');
    await page.evaluate(`${el}.startVoice()`);
    const layout = (await page.evaluate(`(() => {
      const root = ${el}.shadowRoot;
      const end = [...root.querySelectorAll('button')].find((b) => b.textContent === 'End call');
      return { log: root.querySelector('.log').getBoundingClientRect().height, endWraps: getComputedStyle(end).whiteSpace !== 'nowrap' };
    })()`)) as { log: number; endWraps: boolean };
    t.ok(layout.log >= 170, `the conversation stays readable during a call (${Math.round(layout.log)} px)`);
    t.notOk(layout.endWraps, '"End call" stays on one line');
    t.ok(await page.evaluate(dotShown), 'the status dot shows beside its words during the call');
    // Once the media socket is up the call is live: listening, or already thinking/speaking when the simulator's
    // greeting opened the gate first (which of them depends on timing, not on the widget).
    const states = await voiceStates(page);
    t.ok(
      states.some((s) => s === 'listening' || s === 'thinking' || s === 'speaking'),
      `startVoice() resolves once the call is live (${states.join(' > ')})`,
    );
    await page.evaluate(`${el}.endVoice()`);
    t.same((await events(page, 'parley:ended')).at(-1), { endReason: null }, 'endVoice() resolves once the call ended');
    await page.close();
  });

  await t.test(
    'a second tab of the same visitor supersedes the first call, on a plan with one concurrent call',
    async (t) => {
      // Its own service in enforce mode: the free plan allows one concurrent voice call per account.
      const enforced = await startTestApp(t, { env: { HOSTED_USAGE_ENFORCEMENT: 'enforce' } });
      const site = await hostSite(t, enforced.url);
      const o = await ownerWithVoice(enforced);
      const a = await voiceAssistant(enforced, o, { settings: { allowedDomains: [site.origin] } });
      const first = await openHost(browser, site.url(a.publicId));
      await first.getByRole('button', { name: 'Start voice call' }).click();
      await until(first, stateIs('listening'), 'the first tab listening');
      const second = await openHost(browser, site.url(a.publicId)); // same browser profile: the same visitor id
      await second.getByRole('button', { name: 'Start voice call' }).click();
      await until(second, stateIs('listening'), 'the second tab listening (admitted, not refused)');
      await until(first, `window.__parley.some((e) => e.type === 'parley:ended')`, 'the first call to end');
      t.same((await events(first, 'parley:ended'))[0], { endReason: 'superseded' });
      t.ok(
        await first.getByText('This call continues in another window.').isVisible(),
        'the first tab says where the call went',
      );
      await second.getByRole('button', { name: 'End call' }).click();
      await until(second, `window.__parley.some((e) => e.type === 'parley:ended')`, 'the second call to end');
      await first.close();
      await second.close();
    },
  );

  await t.test('a page whose origin is not allowed: a clear error, no hang', async (t) => {
    const stranger = await hostSite(t, app.url);
    const page = await openHost(browser, stranger.url(assistant.publicId));
    await until(page, `window.__parley.some((e) => e.type === 'parley:error')`, 'parley:error', 10_000);
    t.match((await events(page, 'parley:error'))[0], {
      code: 'WIDGET_ORIGIN_NOT_ALLOWED',
      message: 'This assistant is not available on this site.',
    });
    t.ok(
      await page.getByText('This assistant is not available on this site.').first().isVisible(),
      'the visitor reads why',
    );
    const before = app.app.voice.sessions.size;
    // The call button is off (test/browser/widget-origin.test.ts); the API call refuses the same way, without a hang.
    t.ok(await page.getByRole('button', { name: 'Start voice call' }).isDisabled(), 'the call button is off');
    await page.evaluate(`document.querySelector('parley-assistant').startVoice()`);
    await until(
      page,
      `(() => { const s = window.__parley.filter((e) => e.type === 'parley:state').map((e) => e.detail.voice); return s.at(-2) === 'connecting' && s.at(-1) === 'error'; })()`,
      'connecting, then the voice error state',
      10_000,
    );
    t.equal(app.app.voice.sessions.size, before, 'no voice session was started');
    await page.close();
  });

  await t.test('the provider fails mid-call: the call ends with a neutral message, no hang', async (t) => {
    const failing = await voiceAssistant(app, owner, {
      instructions: 'Be brief. [sim:drop-after=1500,refuse-reconnect]',
      settings: { allowedDomains: [host.origin] },
    });
    const page = await openHost(browser, host.url(failing.publicId));
    await page.getByRole('button', { name: 'Start voice call' }).click();
    await until(page, `window.__parley.some((e) => e.type === 'parley:ended')`, 'the call to end', 30_000);
    const [ended] = await events(page, 'parley:ended');
    t.equal(ended.endReason, 'disconnected', 'widget callers see disconnected');
    t.ok(
      (await voiceStates(page)).includes('reconnecting'),
      'the visitor saw "Reconnecting…" while the service tried the provider again',
    );
    t.ok(await page.getByText('The call was disconnected. You can start a new one.').isVisible(), 'a neutral message');
    t.equal((await voiceStates(page)).at(-1), 'ended');
    await page.close();
  });

  await t.test(
    'the provider refuses the session: a clear error, and the next chat says voice is unavailable',
    async (t) => {
      const refusing = await voiceAssistant(app, owner, {
        instructions: 'Be brief. [sim:start-refused]',
        settings: { allowedDomains: [host.origin] },
      });
      const page = await openHost(browser, host.url(refusing.publicId));
      await page.getByRole('button', { name: 'Start voice call' }).click();
      await until(page, stateIs('error'), 'the voice error state', 15_000);
      t.match((await events(page, 'parley:error')).at(-1), {
        code: 'VOICE_UNAVAILABLE',
        message: 'Voice is not available right now. You can keep typing here.',
      });
      const chatRequest = page.waitForRequest((r) => r.url().endsWith('/api/v1/chat') && r.method() === 'POST');
      await page.getByRole('textbox', { name: 'Message' }).fill('Why did the call stop?');
      await page.getByRole('textbox', { name: 'Message' }).press('Enter'); // the keyboard sends too
      t.equal((await chatRequest).postDataJSON().voiceUnavailable, true, 'the next chat carries voiceUnavailable');
      await until(
        page,
        `window.__parley.some((e) => e.type === 'parley:message' && e.detail.role === 'assistant' && e.detail.final)`,
        'the answer',
      );
      await page.close();
    },
  );

  await t.test('an assistant that records asks for consent first; the call starts only after yes', async (t) => {
    const recording = await voiceAssistant(app, owner, {
      voice: { recording: 'on' },
      settings: { allowedDomains: [host.origin] },
    });
    const page = await openHost(browser, host.url(recording.publicId));
    const before = app.app.voice.sessions.size;
    await page.getByRole('button', { name: 'Start voice call' }).click();
    const consent = page.getByRole('group', { name: 'Recording consent' });
    await consent.waitFor({ state: 'visible', timeout: 10_000 });
    t.equal(app.app.voice.sessions.size, before, 'no session before the visitor answers');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await until(page, stateIs('idle'), 'back to idle', 10_000);
    t.equal(app.app.voice.sessions.size, before, 'declining starts nothing');
    await page.getByRole('button', { name: 'Start voice call' }).click();
    const mint = page.waitForRequest((r) => r.url().endsWith('/api/v1/voice/sessions') && r.method() === 'POST');
    await page.getByRole('button', { name: 'Agree and start call' }).click();
    t.match((await mint).postDataJSON(), {
      recordingConsent: true,
      capabilities: ['heartbeat', 'playback_gate'],
      source: 'widget',
    });
    await until(page, stateIs('listening'), 'listening');
    await page.getByRole('button', { name: 'End call' }).click();
    await until(page, `window.__parley.some((e) => e.type === 'parley:ended')`, 'parley:ended');
    await page.close();
  });

  await t.test(
    'a signed visitor (signature and visitor-id attributes) chats; an unsigned one is refused neutrally',
    async (t) => {
      const signed = await voiceAssistant(app, owner, {
        settings: { allowedDomains: [host.origin], requireWidgetSigning: true },
      });
      const sign = await post(
        app.url,
        '/api/v1/widget/sign',
        { assistantId: signed.publicId },
        { origin: host.origin },
      );
      t.equal(sign.status, 200);
      const visitorId = sign.body.visitorId as string;
      const page = await openHost(
        browser,
        host.url(signed.publicId, { 'visitor-id': visitorId, signature: sign.body.signature }),
      );
      const chat = page.waitForRequest((r) => r.url().endsWith('/api/v1/chat') && r.method() === 'POST');
      await page.getByRole('textbox', { name: 'Message' }).fill('Hello');
      await page.getByRole('button', { name: 'Send' }).click();
      const request = await chat;
      t.equal(
        request.headers()['x-parley-signature'],
        sign.body.signature,
        'the signature is sent as X-Parley-Signature',
      );
      t.equal(request.postDataJSON().visitorId, visitorId);
      await until(
        page,
        `window.__parley.some((e) => e.type === 'parley:message' && e.detail.role === 'assistant' && e.detail.final)`,
        'the answer',
      );
      await page.close();

      const unsigned = await openHost(browser, host.url(signed.publicId));
      await unsigned.getByRole('textbox', { name: 'Message' }).fill('Hello');
      await unsigned.getByRole('button', { name: 'Send' }).click();
      await until(unsigned, `window.__parley.some((e) => e.type === 'parley:error')`, 'parley:error', 10_000);
      t.match((await events(unsigned, 'parley:error')).at(-1), {
        code: 'WIDGET_SIGNATURE_REQUIRED',
        message: 'This conversation could not be verified. Please reload the page.',
      });
      await unsigned.close();
    },
  );

  await t.test('mode: chat only when the assistant has no voice; mode="voice" hides the chat box', async (t) => {
    const textOnly = await voiceAssistant(app, owner, {
      voice: { enabled: false },
      settings: { allowedDomains: [host.origin] },
    });
    const page = await openHost(browser, host.url(textOnly.publicId));
    await page.getByRole('heading', { name: 'Voice helper' }).waitFor({ state: 'visible', timeout: 10_000 }); // the config is in
    t.ok(await page.getByRole('textbox', { name: 'Message' }).isVisible(), 'the chat box');
    t.equal(await page.getByRole('button', { name: 'Start voice call' }).count(), 0, 'no voice button without voice');
    await page.close();
    const voiceOnly = await openHost(browser, host.url(assistant.publicId, { mode: 'voice' }));
    await voiceOnly.getByRole('button', { name: 'Start voice call' }).waitFor({ state: 'visible', timeout: 10_000 });
    t.equal(await voiceOnly.getByRole('textbox', { name: 'Message' }).count(), 0, 'no chat box in voice mode');
    await voiceOnly.close();
  });

  await t.test('a denied microphone: a clear error, no session, no hang', async (t) => {
    const denied = await launchBrowser(t, { microphone: 'deny' });
    const page = await openHost(denied, host.url(assistant.publicId));
    const before = app.app.voice.sessions.size;
    await page.getByRole('button', { name: 'Start voice call' }).click();
    await until(page, stateIs('error'), 'the voice error state', 10_000);
    t.match((await events(page, 'parley:error')).at(-1), { code: 'MICROPHONE_DENIED' });
    t.ok(
      await page.getByText('The microphone is blocked.', { exact: false }).isVisible(),
      'the visitor reads what to do',
    );
    t.equal(app.app.voice.sessions.size, before, 'no voice session was minted');
    t.ok(await page.getByRole('button', { name: 'Start voice call' }).isVisible(), 'the visitor can try again');
    t.same(denied.errors, [], 'no console or page errors');
    await page.close();
  });

  // The refusals above (403 origin, 502 provider) are logged by the browser as failed loads, and the origin refusal by
  // the widget for the site's owner (which origin to allow); nothing else may be.
  const unexpected = browser.errors.filter(
    (e) =>
      !/^\[console\] Failed to load resource: the server responded with a status of (403|502) /.test(e) &&
      !/^\[console\] Parley: This site may not use this assistant\./.test(e),
  );
  t.same(unexpected, [], 'no other console errors, no page errors, no CSP violations');
});
