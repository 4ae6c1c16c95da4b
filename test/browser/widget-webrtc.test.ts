import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { buildWidget } from '../../web/widget/build.js';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, makeSpeechWav, type TestBrowser } from '../helpers/browser.js';
import { ownerWithVoice, voiceAssistant, waitFor } from '../voice/helpers.js';

/**
 * <parley-assistant transport="auto"> in Debian's chromium with the fake microphone, against the whole service and
 * its simulator: the call goes over WebRTC straight to the simulator's peer (no audio through Parley), is heard at
 * the page and transcribed into the conversation; when the simulator refuses WebRTC the widget falls back to the
 * WebSocket relay by itself, and says so in parley:state.
 */

async function hostPage(
  t: Test,
  parleyUrl: string,
): Promise<{ origin: string; url: (id: string, transport?: string) => string }> {
  const parley = new URL(parleyUrl);
  const server = createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const id = query.get('a') ?? '';
    const transport = query.get('transport') === 'websocket' ? 'websocket' : 'auto';
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; script-src ${parley.origin}; connect-src ${parley.origin} ws://${parley.host}`,
    });
    res.end(`<!doctype html><html lang="en"><title>Host</title>
<script src="${parley.origin}/widget/v1/parley.js" async></script>
<parley-assistant assistant-id="${id.replace(/[^A-Za-z0-9_]/g, '')}" open data-test transport="${transport}"></parley-assistant>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (id, transport = 'auto') => `${origin}/?a=${encodeURIComponent(id)}&transport=${transport}`,
  };
}

const RECORD_EVENTS = `window.__parley = [];
for (const type of ['parley:state', 'parley:ended', 'parley:error']) {
  document.addEventListener(type, (event) => window.__parley.push({ type, detail: event.detail }));
}`;

async function until(page: Page, expression: string, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > deadline) {
      const seen = await page.evaluate('JSON.stringify(window.__parley).slice(-2000)').catch(() => '?');
      throw new Error(`timed out waiting for ${what}\nevents: ${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function openHost(browser: TestBrowser, url: string): Promise<Page> {
  const page = await browser.newPage();
  await page.addInitScript(RECORD_EVENTS);
  await page.goto(url);
  await until(page, `customElements.get('parley-assistant') !== undefined`, 'the widget script');
  return page;
}

const hookOf = (page: Page) =>
  page.evaluate(`JSON.parse(JSON.stringify(document.querySelector('parley-assistant').parleyTest))`) as Promise<any>;
const transportsOf = (page: Page) =>
  page.evaluate(
    `window.__parley.filter((e) => e.type === 'parley:state' && e.detail.transport).map((e) => e.detail.transport)`,
  ) as Promise<string[]>;

t.test('the widget over WebRTC: heard, transcribed, no audio through Parley; fallback when refused', async (t) => {
  await buildWidget();
  const app = await startTestApp(t);
  const host = await hostPage(t, app.url);
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
    const page = await openHost(browser, host.url(assistant.publicId));
    const clickedAt = Date.now();
    await page.getByRole('button', { name: 'Start voice call' }).click();
    await until(
      page,
      `window.__parley.some((e) => e.type === 'parley:state' && e.detail.voice === 'listening')`,
      'listening',
    );
    const listeningMs = Date.now() - clickedAt;
    t.same(await transportsOf(page).then((list) => [...new Set(list)]), ['webrtc'], 'parley:state says webrtc');
    const { session } = await hookOf(page);
    const live = app.app.voice.sessions.get(session.sessionId)!;
    t.ok(live, 'the call runs on the service');
    await waitFor(() => live.joined, "the caller's audio reached the provider (reflected on the sideband)", 20_000);
    await until(
      page,
      `document.querySelector('parley-assistant').parleyTest.audibleSamples >= 3`,
      'the assistant heard at the page',
      30_000,
    );
    const heard = await hookOf(page);
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
    const page = await openHost(browser, host.url(assistant.publicId, 'websocket'));
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
    const page = await openHost(browser, host.url(refusing.publicId));
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
    const { session } = await hookOf(page);
    await waitFor(() => app.app.voice.media?.relays.get(session.sessionId) !== undefined, 'relayed');
    t.same(await page.evaluate(`window.__parley.filter((e) => e.type === 'parley:error')`), [], 'no error shown');
    await page.getByRole('button', { name: 'End call' }).click();
    await until(page, `window.__parley.some((e) => e.type === 'parley:ended')`, 'parley:ended');
    await page.close();
  });

  await t.test('auto: ICE does not connect within 3 s, the WebRTC call ends and the relay takes over', async (t) => {
    const page = await openHost(browser, host.url(unreachable.publicId));
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
