import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { Test } from 'tap';

const run = promisify(execFile);

/** Debian's chromium (apt package `chromium`); .ci/run installs it. Tests never download a browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

const BASE_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
  // Audio must start without a user gesture in tests (the widget still starts voice from a click in real use).
  '--autoplay-policy=no-user-gesture-required',
];

export interface BrowserOptions {
  /**
   * Fake microphone: Chrome's fake capture device reads this WAV (loops it). Chrome gives silence, not an error, for
   * a bad path, so make it with `makeSpeechWav`, which checks the file is not silent.
   */
  fakeAudioWav?: string;
  /**
   * What happens when a page asks for the microphone: `accept` (default; `--use-fake-ui-for-media-stream`) or `deny`
   * (the permission is refused, as when a visitor clicks Block).
   */
  microphone?: 'accept' | 'deny';
}

export interface TestBrowser {
  readonly context: BrowserContext;
  newPage(): Promise<Page>;
  /** Console errors and uncaught page errors of every page, in order (`[console] ...` / `[pageerror] ...`). */
  readonly errors: string[];
  close(): Promise<void>;
}

/**
 * Launches Debian's chromium through playwright-core with a fresh user-data-dir, closed (and the profile deleted)
 * at teardown. Fails loudly when the browser is missing: a browser test never skips.
 */
export async function launchBrowser(t: Test, options: BrowserOptions = {}): Promise<TestBrowser> {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
  } catch {
    throw new Error(
      `${CHROMIUM_PATH} is missing: install Debian's chromium (apt-get install chromium); browser tests never skip`,
    );
  }
  const args = [...BASE_FLAGS, '--use-fake-device-for-media-stream'];
  if ((options.microphone ?? 'accept') === 'accept') args.push('--use-fake-ui-for-media-stream');
  else args.push('--use-fake-ui-for-media-stream=deny');
  if (options.fakeAudioWav !== undefined) args.push(`--use-file-for-fake-audio-capture=${options.fakeAudioWav}`);
  const userDataDir = mkdtempSync(join(tmpdir(), 'parley-chromium-'));
  const errors: string[] = [];
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args,
      timeout: 30_000,
    });
  } catch (err) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw err;
  }
  const watch = (page: Page) => {
    page.on('console', (msg) => {
      if (msg.type() === 'error') errors.push(`[console] ${msg.text()}`);
    });
    page.on('pageerror', (err) => errors.push(`[pageerror] ${err.message}`));
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await context.close().catch(() => undefined);
    rmSync(userDataDir, { recursive: true, force: true });
  };
  t.teardown(close);
  return {
    context,
    errors,
    newPage: () => context.newPage(),
    close,
  };
}

/**
 * Speaks `text` with espeak-ng into a 48 kHz mono 16-bit WAV (what Chrome's fake capture device reads best), with
 * `trailingSilenceSeconds` of silence after it so a looping fake microphone leaves a pause the listener hears as the
 * end of an utterance. Asserts the file is not silent (`sox stat`), then deletes it at teardown.
 */
export async function makeSpeechWav(t: Test, text: string, trailingSilenceSeconds = 2): Promise<string> {
  for (const tool of ['/usr/bin/espeak-ng', '/usr/bin/sox']) {
    try {
      accessSync(tool, constants.X_OK);
    } catch {
      throw new Error(`${tool} is missing: install the Debian packages espeak-ng and sox; browser tests never skip`);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'parley-speech-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const raw = join(dir, 'espeak.wav');
  const wav = join(dir, 'speech-48k.wav');
  await run('espeak-ng', ['-w', raw, text]);
  await run('sox', [
    raw,
    '-r',
    '48000',
    '-c',
    '1',
    '-b',
    '16',
    wav,
    'norm',
    '-3',
    'pad',
    '0.2',
    String(trailingSilenceSeconds),
  ]);
  const rms = await wavRms(wav);
  if (!(rms > 0.01)) throw new Error(`the fake-microphone WAV ${wav} is silent (RMS amplitude ${rms})`);
  return wav;
}

/** RMS amplitude (0..1) of a sound file, as `sox <file> -n stat` reports it. */
export async function wavRms(path: string): Promise<number> {
  const { stderr } = await run('sox', [path, '-n', 'stat']);
  const match = /RMS\s+amplitude:\s+([0-9.eE+-]+)/.exec(stderr);
  if (!match) throw new Error(`sox stat gave no RMS amplitude for ${path}: ${stderr}`);
  return Number(match[1]);
}

/** The `<parley-assistant>` element's test hook (its `parleyTest` property) as plain JSON, or null before it exists. */
export function widgetHook(page: Page): Promise<any> {
  return page.evaluate(
    `JSON.parse(JSON.stringify(document.querySelector('parley-assistant')?.parleyTest ?? null))`,
  ) as Promise<any>;
}

/**
 * Waits (bounded, polling every 50 ms) until the widget's test hook satisfies `ok` and returns it; on timeout the
 * error shows the last hook seen and the page errors, if given.
 */
export async function untilWidgetHook(
  page: Page,
  ok: (hook: any) => boolean,
  what: string,
  options: { timeoutMs?: number; errors?: string[] } = {},
): Promise<any> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const hook = await widgetHook(page);
    if (hook && ok(hook)) return hook;
    if (Date.now() > deadline) {
      const errors = options.errors?.length ? `; page errors: ${options.errors.join(' | ')}` : '';
      throw new Error(`timed out waiting for ${what}; hook: ${JSON.stringify(hook).slice(-2000)}${errors}`);
    }
    await page.waitForTimeout(50);
  }
}

/** Signs an owner in to the dashboard at `baseUrl` and waits for the page every sign-in lands on (the Overview). */
export async function signInToDashboard(
  page: Page,
  baseUrl: string,
  owner: { email: string; password: string },
): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/sign-in`);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}
