/**
 * The dashboard's home page and call log in Debian's Chromium: after sign-in the owner lands on the overview, sees
 * today's calls and chats across assistants and how calls ended, follows an end reason to the call log filtered by
 * it, and narrows the log by channel.
 */
import t from 'tap';
import { launchBrowser } from '../helpers/browser.js';
import { createOwner } from '../helpers/identity.js';
import { startTestApp } from '../helpers/app.js';
import { voiceAssistant, waitFor } from '../voice/helpers.js';
import { ensureDashboardBuilt } from '../browser/dashboard-build.js';

await ensureDashboardBuilt();

t.test('sign in lands on the overview; an end reason opens the call log filtered by it', async (t) => {
  const app = await startTestApp(t);
  const { sql } = app.database;
  const owner = await createOwner(sql);
  const assistant = await voiceAssistant(app, owner);
  const call = async (id: string, source: string, transport: string, endReason: string | null, caller?: string) => {
    const at = new Date(Date.now() - 120_000);
    await sql`
      insert into voice_sessions (id, account_id, assistant_id, source, state, end_reason, ended_by, capabilities,
        provider, owner_instance, max_duration_seconds, idle_timeout_seconds, billable_seconds, created_at, started_at,
        ended_at, caller_number)
      values (${id}, ${owner.accountId}, ${assistant.id}, ${source}, 'ended', ${endReason}, 'client', '{}', 'simulator',
        'gone', 900, 600, 30, ${at}, ${at}, ${new Date(at.getTime() + 30_000)}, ${caller ?? null})`;
    await sql`
      insert into voice_timelines (session_id, account_id, assistant_id, transport, minted_at, events, turns, final)
      values (${id}, ${owner.accountId}, ${assistant.id}, ${transport}, ${at}, '[]',
        ${sql.json([{ index: 1, latencyMs: 800 }])}, true)`;
  };
  await call('vs_dash_phone', 'phone', 'phone', 'idle', '+14155550199');
  await call('vs_dash_web', 'widget', 'webrtc', null);

  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${app.url}/dashboard/sign-in`);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/dashboard\/overview$/);
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  const stats = await page.locator('dl.stats').innerText();
  t.match(stats, /Calls\s+2/, "today's two calls");
  t.match(stats, /Turn latency p50\s+800 ms/);
  t.match(await page.getByRole('table', { name: 'The day per assistant' }).innerText(), /Voice helper\s+2/);

  await page.getByRole('link', { name: 'Idle' }).click();
  await page.waitForURL(/\/dashboard\/call-log\?endReason=idle/);
  await page.getByRole('heading', { name: 'Call log', level: 1 }).waitFor();
  const rows = page.locator('table tbody tr');
  const rowsAre = (n: number) =>
    waitFor(async () => ((await rows.count()) === n ? true : undefined), `${n} rows in the call log`);
  await rowsAre(1);
  t.match(
    await rows.first().innerText(),
    /Phone[\s\S]*\+1 415 ••• 0199[\s\S]*Idle/,
    'the idle phone call, caller masked',
  );

  await page.getByRole('button', { name: 'Clear' }).click();
  await rowsAre(2);
  await page.getByLabel('Channel').selectOption('webrtc');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/transport=webrtc/);
  await rowsAre(1);
  t.match(await rows.first().innerText(), /Browser[\s\S]*Caller hung up/);
  t.same(
    browser.errors.filter((e) => !/401/.test(e)),
    [],
    'no page errors',
  );
});
