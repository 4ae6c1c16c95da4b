import type { Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import type { TestBrowser } from '../helpers/browser.js';

/**
 * A host site for <parley-assistant> in the browser tests: a page of its own origin (another loopback port, on the
 * assistant's allowlist) that embeds the widget with the two-line snippet under a strict CSP, and helpers that record
 * and wait for the widget's parley:* events. Page code is passed as strings (the project's typecheck has no DOM
 * library).
 */

export interface Hosted {
  origin: string;
  /** The host page embedding this assistant, with extra attributes on the element (name -> value). */
  url: (assistantId: string, attributes?: Record<string, string>) => string;
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * A host page server on loopback: `/?a=<assistantId>` embeds the widget with the snippet, under a strict CSP.
 * `parleyUrl` may be a function when Parley's address is known only after the site's origin is (the assistant's
 * allowlist names the site).
 */
export async function hostSite(t: Test, parleyUrl: string | (() => string)): Promise<Hosted> {
  const server = createServer((req, res) => {
    const parley = new URL(typeof parleyUrl === 'string' ? parleyUrl : parleyUrl());
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const assistantId = query.get('a') ?? '';
    // Relayed calls unless a test asks otherwise (`{ transport: 'auto' }`: WebRTC first, the relay as fallback).
    const asked = JSON.parse(query.get('attrs') ?? '{}') as Record<string, string>;
    const extra = Object.entries({ transport: 'websocket', ...asked })
      .map(([name, value]) => ` ${name.replace(/[^a-z-]/g, '')}="${escapeAttribute(value)}"`)
      .join('');
    const csp = [
      "default-src 'none'",
      `script-src ${parley.origin}`,
      `connect-src ${parley.origin} ws://${parley.host}`,
      "style-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ].join('; ');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': csp });
    res.end(`<!doctype html><html lang="en"><title>Host shop</title><h1>Host shop</h1>
<script src="${parley.origin}/widget/v1/parley.js" async></script>
<parley-assistant assistant-id="${escapeAttribute(assistantId)}" open data-test${extra}></parley-assistant>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (assistantId, attributes = {}) =>
      `${origin}/?a=${encodeURIComponent(assistantId)}&attrs=${encodeURIComponent(JSON.stringify(attributes))}`,
  };
}

/** Records every parley:* event at the document (they bubble and are composed) into window.__parley. */
export const RECORD_EVENTS = `window.__parley = [];
for (const type of ['parley:state', 'parley:message', 'parley:ended', 'parley:error']) {
  document.addEventListener(type, (event) => window.__parley.push({ type, detail: event.detail }));
}`;

export async function openHost(browser: TestBrowser, url: string): Promise<Page> {
  const page = await browser.newPage();
  await page.addInitScript(RECORD_EVENTS);
  await page.goto(url);
  await until(page, `customElements.get('parley-assistant') !== undefined`, 'the widget script', 10_000);
  return page;
}

/**
 * Waits (bounded) until a page expression is truthy, polling from Node (page.waitForFunction would evaluate a string
 * inside the page, which the host page's CSP forbids); on timeout the error shows the events seen.
 */
export async function until(page: Page, expression: string, what: string, timeoutMs = 30_000): Promise<unknown> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await page.evaluate(expression);
    if (value) return value;
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const seen = await page.evaluate('JSON.stringify(window.__parley).slice(-3000)').catch(() => '?');
  const hook = await page
    .evaluate(`JSON.stringify(document.querySelector('parley-assistant').parleyTest).slice(-2000)`)
    .catch(() => '?');
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\nevents: ${seen}\ntest hook: ${hook}`);
}

export const events = (page: Page, type: string) =>
  page.evaluate(`window.__parley.filter((e) => e.type === ${JSON.stringify(type)}).map((e) => e.detail)`) as Promise<
    any[]
  >;
