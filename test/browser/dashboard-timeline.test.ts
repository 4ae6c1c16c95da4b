/**
 * A call's timeline in the dashboard, in Debian's Chromium: a real call (the provider simulator delegates the first
 * question, so that turn waits for grounding, and cuts its link once, so the call is degraded for a while) with three
 * turns, paced like a caller at 20 ms a frame; then the owner opens the conversation and sees the call drawn (lanes,
 * the turns as bars split by owner, the end with its fault), and the analytics tab's 7-day turn latency chart.
 * With DASHBOARD_SCREENSHOTS=<folder>, the README's picture is written there as voice-timeline.png.
 */
import { join } from 'node:path';
import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, signInToDashboard } from '../helpers/browser.js';
import { bearer } from '../helpers/identity.js';
import { mintWithKey, ownerWithVoice, voiceAssistant, waitFor } from '../voice/helpers.js';
import { mediaUrl, openMedia, speechFrames, type MediaClient } from '../voice/media-client.js';
import { ensureDashboardBuilt } from './dashboard-build.js';

const screenshots = process.env['DASHBOARD_SCREENSHOTS'];

await ensureDashboardBuilt();
const app = await startTestApp(t);
const owner = await ownerWithVoice(app);
const assistant = await voiceAssistant(app, owner, {
  instructions: 'Be brief. [sim:delegate,drop-after=5000]',
});

/** A microphone: 20 ms frames at their real pace, speech where the script says so, silence otherwise. */
async function talk(media: MediaClient, script: Array<{ speechMs: number; thenMs: number }>): Promise<void> {
  const voiced = speechFrames(1)[0]!;
  const silent = Buffer.alloc(960);
  const started = Date.now();
  let sent = 0;
  for (const part of script) {
    const frames = [...Array<Buffer>(part.speechMs / 20).fill(voiced), ...Array<Buffer>(part.thenMs / 20).fill(silent)];
    for (const frame of frames) {
      if (media.ws.readyState !== media.ws.OPEN) return;
      media.send(frame);
      sent++;
      const due = started + sent * 20 - Date.now();
      if (due > 0) await new Promise((r) => setTimeout(r, due));
    }
  }
}

t.test('the conversation page draws the call; the analytics tab shows turn latency', async (t) => {
  const minted = await mintWithKey(app, owner, assistant);
  const media = await openMedia(mediaUrl(app, minted));
  await media.waitText((e) => e.type === 'state', 'the first state');
  await talk(media, [
    { speechMs: 800, thenMs: 2600 },
    { speechMs: 800, thenMs: 3200 },
    { speechMs: 800, thenMs: 2000 },
  ]);
  const timelineUrl = `${app.url}/api/v1/voice/sessions/${minted.sessionId}/timeline`;
  const live = await waitFor(async () => {
    const body = (await (await fetch(timelineUrl, { headers: bearer(owner.secret) })).json()) as any;
    return body.turns.length >= 2 ? body : undefined;
  }, 'two turns');
  const end = await fetch(`${app.url}/api/v1/voice/sessions/${minted.sessionId}/end`, {
    method: 'POST',
    headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
    body: '{}',
  });
  t.equal(end.status, 200);
  await media.closed;
  t.ok(
    live.turns[0].parts.some((p: any) => p.name === 'grounding' && p.owner === 'platform' && p.ms > 0),
    'the delegated turn waited for grounding',
  );

  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  await page.setViewportSize({ width: 1100, height: 900 });
  page.setDefaultTimeout(20_000);
  await signInToDashboard(page, app.url, owner);
  const errorsBefore = browser.errors.length;
  await page.goto(
    `${app.url}/dashboard/assistants/${encodeURIComponent(assistant.id)}/conversations/${encodeURIComponent(minted.conversationId)}`,
  );
  const figure = page.getByRole('figure', { name: 'Timeline of call 1' });
  await figure.waitFor();
  const lanes = figure.getByRole('img', { name: /^Call timeline over/ });
  t.match(await lanes.getAttribute('aria-label'), /\d+ turns?, .*Ended: caller hung up · fault: none/);
  t.ok((await figure.locator('rect.tl-turn').count()) >= 2, 'the turns are marked on the lanes');
  t.ok((await figure.locator('rect.tl-owner-provider').count()) >= 2, 'each turn bar has its provider part');
  t.ok((await figure.locator('rect.tl-owner-platform').count()) >= 1, 'and the grounded one its platform part');
  t.ok((await figure.locator('rect.tl-gate-open').count()) >= 1, 'the gate is drawn');
  t.match(await figure.locator('figcaption').innerText(), /turn latency p50 \d+ ms, p95 \d+ ms/);
  if (screenshots) await figure.screenshot({ path: join(screenshots, 'voice-timeline.png') });

  // At 375 px the current tab stays in sight and the lanes' labels stay readable (the figure scrolls, not the page).
  await page.setViewportSize({ width: 375, height: 760 });
  const current = page.locator('nav.tabs a[aria-current="page"]');
  t.equal(await current.innerText(), 'Conversations');
  const tab = (await current.boundingBox())!;
  t.ok(
    tab.x >= 0 && tab.x + tab.width <= 375,
    `the current tab is in sight (${Math.round(tab.x)}..${Math.round(tab.x + tab.width)})`,
  );
  const label = (await figure.locator('text.tl-label').first().boundingBox())!;
  t.ok(label.height >= 9, `lane labels stay readable (${label.height.toFixed(1)} px high)`);
  t.equal(
    await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
    0,
    'the page does not scroll sideways',
  );
  await page.setViewportSize({ width: 1100, height: 900 });

  await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistant.id)}/analytics`);
  const chart = page.getByRole('img', { name: /^Voice turn latency over 7 days: \d+ turns/ });
  await chart.waitFor();
  t.ok((await page.locator('rect.lat-p50').count()) === 1, "today's turn latency bar");
  t.same(browser.errors.slice(errorsBefore), [], 'no console errors or uncaught exceptions');
});
