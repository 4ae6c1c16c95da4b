/**
 * The owner's first day in the dashboard, in Debian's Chromium against the whole service: a refused form says what
 * is wrong beside the field, conversations can be searched, exported and deleted, and every page fits 375 px.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, createOwner } from '../helpers/identity.js';
import { ensureDashboardBuilt } from './dashboard-build.js';

await ensureDashboardBuilt();
const database = await createTestDatabase(t);
const owner = await createOwner(database.sql, { email: `journey-${Date.now()}@example.test` });
const { url } = await startTestApp(t, { database, env: { ADMIN_USER_IDS: owner.userId } });
const browser = await launchBrowser(t);
const page = await browser.newPage();
page.setDefaultTimeout(15_000);

const api = async <T>(path: string, body?: unknown): Promise<T> => {
  const res = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return (await res.json()) as T;
};
const { assistant } = await api<{ assistant: { id: string; publicId: string } }>('/api/v1/assistants', {
  name: 'Journey helper',
});
const asked = [
  'Where is my parcel?',
  'Can I pay with https://example.com/a-very-long-link-without-any-breaks-that-could-push-a-table-wider-than-a-phone?',
];
const conversationIds: string[] = [];
for (const message of asked) {
  const answer = await api<{ conversationId: string }>('/api/v1/chat', {
    assistantId: assistant.publicId,
    message,
    visitorId: `visitor-${conversationIds.length}-journey`,
  });
  conversationIds.push(answer.conversationId);
}

const overflowX = (p: Page) =>
  p.evaluate('document.documentElement.scrollWidth - window.innerWidth') as Promise<number>;

await page.goto(`${url}/dashboard/sign-in`);
await page.getByLabel('Email').fill(owner.email);
await page.getByLabel('Password').fill(owner.password);
await page.getByRole('button', { name: 'Sign in' }).click();
await page.waitForURL(/\/dashboard\/overview$/);

t.test('a key with no scope: the reason shows beside the scopes, not only a code', async (t) => {
  await page.goto(`${url}/dashboard/keys`);
  await page.getByLabel('Key name').fill('ci');
  await page.getByRole('button', { name: 'Create key' }).click();
  const reason = page.locator('#field-error-scopes');
  await reason.waitFor();
  t.equal(await reason.innerText(), 'Choose at least one scope');
  t.equal(await page.locator('fieldset.scopes-grid').getAttribute('aria-invalid'), 'true');
  t.notMatch(await page.getByRole('alert').innerText(), /The body is not valid\.$/, 'no bare sentence');
});

t.test('conversations: channel, visitor label, first message; search; export; delete', async (t) => {
  const base = `${url}/dashboard/assistants/${assistant.id}/conversations`;
  await page.goto(base);
  const table = page.locator('table');
  await table.waitFor();
  const text = await table.innerText();
  t.match(text, /Where is my parcel\?/, 'the first message is shown');
  t.match(text, /Visitor [A-Z2-9]{4}/, 'a readable visitor label');
  t.notMatch(text, /visitor-0-journey/, 'not the raw visitor id');
  t.match(text, /Chat/);

  await page.getByLabel('Search').fill('parcel');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.locator('tbody tr').nth(1).waitFor({ state: 'detached' });
  t.match(await page.locator('tbody').innerText(), /Where is my parcel/);
  t.pass('search narrows the list to the matching conversation');

  const exportHref = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
  t.match(exportHref, /\/api\/v1\/conversations\/export\?.*q=parcel/, 'the CSV export takes the filters');
  const csv = await page.evaluate(async (h) => (await fetch(h!)).text(), exportHref);
  t.equal(csv.trimEnd().split('\r\n').length, 2, 'header and the one match');

  await page.locator('tbody tr a').first().click();
  await page.getByRole('heading', { name: 'Transcript' }).waitFor();
  const exportJson = page.getByRole('link', { name: 'Export JSON' });
  await exportJson.waitFor();
  const exported = await page.evaluate(async (h) => (await fetch(h!)).json(), await exportJson.getAttribute('href'));
  t.match(exported, { conversation: { id: conversationIds[0] }, messages: [{ role: 'user' }, { role: 'assistant' }] });
  await page.getByRole('button', { name: 'Delete conversation' }).click();
  await page.getByRole('button', { name: 'Yes, delete it' }).click();
  await page.waitForURL(/\/conversations$/);
  const res = await fetch(`${url}/api/v1/conversations/${conversationIds[0]}`, { headers: bearer(owner.secret) });
  t.equal(res.status, 404, 'the conversation is gone');
});

t.test('analytics: feedback counts carry SVG icons and words, no emoji that needs a font', async (t) => {
  await page.goto(`${url}/dashboard/assistants/${assistant.id}/analytics`);
  const tile = page.locator('dd', { has: page.locator('.feedback-count') });
  await tile.waitFor();
  const text = await tile.innerText();
  t.match(text, /\d+ helpful/);
  t.notMatch(text, /\p{Extended_Pictographic}/u, 'no emoji');
  t.equal(await tile.locator('svg.icon').count(), 2);
});

t.test('every page fits 375 px: no page-level sideways scroll', async (t) => {
  await page.setViewportSize({ width: 375, height: 760 });
  const assistantBase = `/assistants/${assistant.id}`;
  const paths = [
    '/assistants',
    '/usage',
    '/keys',
    '/billing',
    '/admin',
    assistantBase,
    `${assistantBase}/documents`,
    `${assistantBase}/playground`,
    `${assistantBase}/conversations`,
    `${assistantBase}/conversations/${conversationIds[1]}`,
    `${assistantBase}/analytics`,
    `${assistantBase}/evals`,
  ];
  for (const path of paths) {
    await page.goto(`${url}/dashboard${path}`);
    await page.locator('main h1').waitFor();
    await page.waitForLoadState('networkidle');
    t.equal(await overflowX(page), 0, `${path} fits 375 px`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
});
