import t from 'tap';
import type { Page } from 'playwright-core';
import { buildWidget } from '../../web/widget/build.js';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, makeSpeechWav, widgetHook } from '../helpers/browser.js';
import { ownerWithVoice, voiceAssistant, waitFor } from '../voice/helpers.js';
import { hostSite, openHost, until } from './host-site.js';

/**
 * <parley-assistant transport="auto"> in Debian's chromium with the fake microphone, against the whole service and
 * its simulator: the call goes over WebRTC straight to the simulator's peer (no audio through Parley), is heard at
 * the page and transcribed into the conversation; when the simulator refuses WebRTC the widget falls back to the
 * WebSocket relay by itself, and says so in parley:state.
 */

const AUTO = { transport: 'auto' };
const transportsOf = (page: Page) =>
  page.evaluate(
    `window.__parley.filter((e) => e.type === 'parley:state' && e.detail.transport).map((e) => e.detail.transport)`,
  ) as Promise<string[]>;

t.test('the widget over WebRTC: heard, transcribed, no audio through Parley; fallback when refused', async (t) => {
  await buildWidget();
  const app = await startTestApp(t);
  const host = await hostSite(t, app.url);
  const owner = await ownerWithVoice(app);
  const settings = { settings: { allowedDomains: [host.origin] } };
  const assistant = await voiceAssistant(app, owner, settings);
  const refusing = await voiceAssistant(app, owner, { ...settings, instructions: 'Be brief. [sim:webrtc-refused]' });
  const unreachable = await voiceAssistant(app, owner, {
    ...settings,
    instructions: 'Be brief. [sim:webrtc-unreachable]',
  });
  const wav = await makeSpeechWav(t, 'Hello there. When are you open tomorrow?');
  const browser = await launchBrowser(t, { fakeAudioWav: wav });
  const figures: Record<string, { listeningMs: number; firstAudioMs: number }> = {};

  await t.test('auto: WebRTC to the provider, the answer heard at the page', async (t) => {
    const page = await openHost(browser, host.url(assistant.publicId, AUTO));
    const clickedAt = Date.now();
    await page.getByRole('button', { name: 'Start voice call' }).click();
    await until(
      page,
      `window.__parley.some((e) => e.type === 'parley:state' && e.detail.voice === 'listening')`,
      'listening',
    );
    const listeningMs = Date.now() - clickedAt;
    t.same(await transportsOf(page).then((list) => [...new Set(list)]), ['webrtc'], 'parley:state says webrtc');
    const { session } = await widgetHook(page);
    const live = app.app.voice.sessions.get(session.sessionId)!;
    t.ok(live, 'the call runs on the service');
    await waitFor(() => live.joined, "the caller's audio reached the provider (reflected on the sideband)", 20_000);
    await until(
      page,
      `document.querySelector('parley-assistant').parleyTest.audibleSamples >= 3`,
      'the assistant heard at the page',
      30_000,
    );
    const heard = await widgetHook(page);
    figures.webrtc = { listeningMs, firstAudioMs: Date.now() - clickedAt };
    t.ok(heard.maxOutputRms > 0.01, `non-silent audio at the page (max RMS ${heard.maxOutputRms.toFixed(3)})`);
    t.ok(
      (heard.timeline as Array<{ kind: string; value: string }>).some((e) => e.kind === 'gate' && e.value === 'open'),
      'heard after the gate opened',
    );
    await waitFor(
      async () => {
        const rows = await app.database.sql<{ role: string }[]>`
        select role from messages where conversation_id = ${live.conversationId}`;
        return rows.some((r) => r.role === 'user');
      },
      'the caller transcribed into the conversation',
      20_000,
    );
    t.equal(app.app.voice.media?.relays.get(session.sessionId), undefined, 'no media socket: nothing relayed');
    await page.getByRole('button', { name: 'End call' }).click();
    await until(page, `window.__parley.some((e) => e.type === 'parley:ended')`, 'parley:ended');
    await waitFor(() => !app.app.voice.sessions.has(session.sessionId), 'ended at the service');
    await page.close();
  });

  await t.test('for comparison: the same call over the relay', async (t) => {
    const page = await openHost(browser, host.url(assistant.publicId));
    const clickedAt = Date.now();
    await page.getByRole('button', { name: 'Start voice call' }).click();
    await until(
      page,
      `window.__parley.some((e) => e.type === 'parley:state' && e.detail.voice === 'listening')`,
      'listening',
    );
    const listeningMs = Date.now() - clickedAt;
    await until(
      page,
      `document.querySelector('parley-assistant').parleyTest.audibleSamples >= 3`,
      'the assistant heard at the page',
    );
    figures.websocket = { listeningMs, firstAudioMs: Date.now() - clickedAt };
    t.same(await transportsOf(page).then((list) => [...new Set(list)]), ['websocket']);
    // Figures only (never asserted): click to listening and to the first audible assistant audio (50 ms polls).
    t.comment(`start -> listening / first assistant audio: ${JSON.stringify(figures)}`);
    await page.getByRole('button', { name: 'End call' }).click();
    await until(page, `window.__parley.some((e) => e.type === 'parley:ended')`, 'parley:ended');
    await page.close();
  });

  await t.test('auto: the provider refuses WebRTC, the widget falls back to the WebSocket relay', async (t) => {
    const page = await openHost(browser, host.url(refusing.publicId, AUTO));
    await page.getByRole('button', { name: 'Start voice call' }).click();
    await until(
      page,
      `window.__parley.some((e) => e.type === 'parley:state' && e.detail.voice === 'listening')`,
      'listening',
    );
    const transports = await transportsOf(page);
    t.equal(transports[0], 'webrtc', 'WebRTC was tried first');
    t.equal(transports.at(-1), 'websocket', 'then the relay');
    const fallback = await page.evaluate(
      `window.__parley.some((e) => e.type === 'parley:state' && e.detail.fallback === true)`,
    );
    t.ok(fallback, 'the fallback is visible in parley:state');
    const { session } = await widgetHook(page);
    await waitFor(() => app.app.voice.media?.relays.get(session.sessionId) !== undefined, 'relayed');
    t.same(await page.evaluate(`window.__parley.filter((e) => e.type === 'parley:error')`), [], 'no error shown');
    await page.getByRole('button', { name: 'End call' }).click();
    await until(page, `window.__parley.some((e) => e.type === 'parley:ended')`, 'parley:ended');
    await page.close();
  });

  await t.test('auto: ICE does not connect within 3 s, the WebRTC call ends and the relay takes over', async (t) => {
    const page = await openHost(browser, host.url(unreachable.publicId, AUTO));
    await page.getByRole('button', { name: 'Start voice call' }).click();
    await until(
      page,
      `window.__parley.some((e) => e.type === 'parley:state' && e.detail.voice === 'listening')`,
      'listening',
    );
    const transports = await transportsOf(page);
    t.same([transports[0], transports.at(-1)], ['webrtc', 'websocket'], 'WebRTC first, then the relay');
    const rows = await app.database.sql<{ state: string; billableSeconds: number | null }[]>`
      select state, end_reason, billable_seconds from voice_sessions where assistant_id = ${unreachable.id} order by started_at`;
    t.equal(rows.length, 2, 'two sessions: the WebRTC attempt and the relayed call');
    t.not(rows[0]!.state, 'active', 'the WebRTC attempt was ended');
    t.equal(Number(rows[0]!.billableSeconds ?? 0), 0, 'and billed nothing (no caller ever reached the provider)');
    await page.getByRole('button', { name: 'End call' }).click();
    await until(page, `window.__parley.some((e) => e.type === 'parley:ended')`, 'parley:ended');
    await page.close();
  });
});
