import type { Test } from 'tap';
import { createAssistant, type Assistant } from '../../src/assistants/index.js';
import type { AssistantSettingsPatch } from '../../src/assistants/settings.js';
import { ManualClock } from '../../src/providers/voice/index.js';
import type { LiveVoiceSession, VoiceOptions } from '../../src/voice/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestDatabase } from '../helpers/db.js';
import { bearer, createOwner, type TestOwner } from '../helpers/identity.js';
import { waitFor } from '../helpers/wait.js';

export { waitFor };

export const ORIGIN = 'https://shop.example';

export interface VoiceTestApp extends TestApp {
  clock: ManualClock;
}

/** The whole service with a manual supervision clock (45 s of silence is clock.advance, not a sleep). */
export async function startVoiceApp(
  t: Test,
  options: { voice?: VoiceOptions; database?: TestDatabase; redisPrefix?: string; env?: Record<string, string> } = {},
): Promise<VoiceTestApp> {
  const clock = (options.voice?.clock as ManualClock | undefined) ?? new ManualClock(0);
  const app = await startTestApp(t, {
    ...(options.database ? { database: options.database } : {}),
    ...(options.redisPrefix ? { redisPrefix: options.redisPrefix } : {}),
    ...(options.env ? { env: options.env } : {}),
    // These tests drive supervision by a manual clock, mostly without a media socket: the join timeout (15 s of the
    // manual clock) is off unless a test sets it; test/fault/join-timeout.test.ts proves it on the real clock.
    voice: { ...options.voice, limits: { joinTimeoutMs: 24 * 3600_000, ...options.voice?.limits }, clock },
  });
  return { ...app, clock };
}

export async function voiceAssistant(
  app: TestApp,
  owner: TestOwner,
  options: { instructions?: string; voice?: AssistantSettingsPatch['voice']; settings?: AssistantSettingsPatch } = {},
): Promise<Assistant> {
  return createAssistant(
    app.database.sql,
    { accountId: owner.accountId },
    {
      name: 'Voice helper',
      instructions: options.instructions ?? 'Be brief.',
      settings: {
        allowedDomains: [ORIGIN],
        ...options.settings,
        voice: {
          enabled: true,
          recording: 'off',
          requireConsent: false,
          maxDurationSeconds: 900,
          idleTimeoutSeconds: 600,
          ...options.voice,
        },
      },
    },
  );
}

export async function ownerWithVoice(app: TestApp): Promise<TestOwner> {
  return createOwner(app.database.sql);
}

export async function post(
  url: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
}

export interface Minted {
  sessionId: string;
  conversationId: string;
  controlToken: string;
  heartbeatIntervalMs?: number;
  [key: string]: unknown;
}

export async function mintWithKey(
  app: TestApp,
  owner: TestOwner,
  assistant: Assistant,
  extra: Record<string, unknown> = {},
): Promise<Minted> {
  const res = await post(
    app.url,
    '/api/v1/voice/sessions',
    { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'], ...extra },
    bearer(owner.secret),
  );
  if (res.status !== 200) throw new Error(`mint failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Minted;
}

export async function mintAsWidget(app: TestApp, assistant: Assistant, extra: Record<string, unknown> = {}) {
  return post(
    app.url,
    '/api/v1/voice/sessions',
    {
      assistantId: assistant.publicId,
      capabilities: ['heartbeat', 'playback_gate'],
      recordingConsent: true,
      visitorId: 'visitor-0001',
      ...extra,
    },
    { origin: ORIGIN },
  );
}

export function heartbeat(app: TestApp, minted: Minted) {
  return post(app.url, `/api/v1/voice/sessions/${minted.sessionId}/heartbeat`, { token: minted.controlToken });
}

export function endWithKey(app: TestApp, owner: TestOwner, sessionId: string) {
  return post(app.url, `/api/v1/voice/sessions/${sessionId}/end`, {}, bearer(owner.secret));
}

export function live(app: TestApp, sessionId: string): LiveVoiceSession {
  const session = app.app.voice.sessions.get(sessionId);
  if (!session) throw new Error(`session ${sessionId} is not live on this instance`);
  return session;
}

/** Advance the supervision clock by one heartbeat interval at a time until the heartbeat answers `status`. */
export async function heartbeatUntil(app: VoiceTestApp, minted: Minted, status: string, stepMs = 1000): Promise<any> {
  return waitFor(async () => {
    app.clock.advance(stepMs);
    const res = await heartbeat(app, minted);
    return res.status === 200 && res.body.status === status ? res.body : undefined;
  }, `heartbeat ${status}`);
}

const FRAME = 960;
/** 20 ms of a loud square wave: the simulator hears speech (peak above its threshold). */
export function voicedFrame(): Buffer {
  const pcm = Buffer.alloc(FRAME);
  for (let i = 0; i < FRAME / 2; i++) pcm.writeInt16LE(i % 40 < 20 ? 8000 : -8000, i * 2);
  return pcm;
}

/**
 * What the media relay does with caller audio: feeds it to the provider session. `words`
 * utterance chunks of 400 ms each, then a silence that ends the utterance.
 */
export function speak(session: LiveVoiceSession, words = 2): void {
  const voiced = voicedFrame();
  const silent = Buffer.alloc(FRAME);
  for (let i = 0; i < words * 20; i++) session.provider.sendAudio(voiced);
  for (let i = 0; i < 40; i++) session.provider.sendAudio(silent);
}

/** Reads an NDJSON response line by line. */
export function ndjsonReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async next(timeoutMs = 10_000): Promise<any | null> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const nl = buffer.indexOf('\n');
        if (nl >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          return JSON.parse(line);
        }
        if (Date.now() > deadline) throw new Error('no NDJSON line in time');
        const chunk = await reader.read();
        if (chunk.done) return null;
        buffer += decoder.decode(chunk.value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
}

export function openGate(app: TestApp, minted: Minted, signal?: AbortSignal): Promise<Response> {
  return fetch(`${app.url}/api/v1/voice/sessions/${minted.sessionId}/gate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: minted.controlToken }),
    ...(signal ? { signal } : {}),
  });
}
