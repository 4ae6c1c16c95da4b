/**
 * `parley-loadtest --phone`: the same load, as phone calls. Each caller is placed through the phone simulator's core
 * (the carrier's signed webhook, then its media stream in μ-law 8 kHz with marks and clear) and the figures are the
 * ones a WebSocket run reports: the webhook's answer stands for the mint, the stream's open for the connect.
 */
import { randomBytes } from 'node:crypto';
import { createParleyClient } from '../../client.js';
import { runPhoneCalls, type PhoneSimReport } from '../phone/run.js';
import type { LoadTestOptions } from './args.js';
import type { LoadTestReport, Progress } from './report.js';
import { serverFigures, SERVER_FIGURE_CALLS } from './server-side.js';
import { Tally } from './stats.js';
import { NO_ROUTE_KEY } from './labels.js';

export interface PhoneLine {
  number: string;
  accountSid: string;
  authToken: string;
  /** Set when this run added the number (deleted afterwards). */
  temporaryId?: string;
}

/**
 * A number for the run: the one given, or a temporary one on the assistant, registered with made-up carrier
 * credentials (the simulator is the carrier, so it signs with them).
 */
export async function phoneLineFor(o: LoadTestOptions, assistantId: string): Promise<PhoneLine> {
  if (o.phone !== undefined && o.phone.number !== undefined) return { ...o.phone };
  const parley = createParleyClient({ baseUrl: o.url, apiKey: o.apiKey!, retry: true });
  const line = {
    number: `+1555${String(100_000_000 + Math.floor(Math.random() * 900_000_000)).slice(-7)}`,
    accountSid: `AC${randomBytes(16).toString('hex')}`,
    authToken: randomBytes(24).toString('base64url'),
  };
  const created = await parley.POST('/api/v1/phone-numbers', {
    body: { phoneNumber: line.number, assistantId, provider: 'twilio', ...line },
  });
  process.stderr.write(`added temporary phone number ${created.phoneNumber}\n`);
  return { ...line, temporaryId: created.id };
}

export async function dropPhoneLine(o: LoadTestOptions, line: PhoneLine): Promise<void> {
  if (line.temporaryId === undefined) return;
  const parley = createParleyClient({ baseUrl: o.url, apiKey: o.apiKey!, retry: true });
  await parley
    .DELETE('/api/v1/phone-numbers/{phoneNumberId}', { params: { path: { phoneNumberId: line.temporaryId } } })
    .then(
      () => process.stderr.write('deleted the temporary phone number\n'),
      (err: unknown) => process.stderr.write(`could not delete the temporary number ${line.number}: ${String(err)}\n`),
    );
}

/** Runs the phone calls and reports them in the load test's shape. `input` is μ-law 8 kHz. */
export async function runPhoneLoadTest(
  o: LoadTestOptions,
  line: PhoneLine,
  input: Uint8Array,
  hooks: { signal?: AbortSignal; onProgress?: (p: Progress) => void; inputLabel: string; assistantId: string | null },
): Promise<LoadTestReport> {
  const startedAt = new Date();
  const phone = await runPhoneCalls(
    {
      url: o.url,
      number: line.number,
      accountSid: line.accountSid,
      authToken: line.authToken,
      calls: o.calls,
      durationMs: o.durationMs,
      rampUpMs: o.rampUpMs,
      sharedEnd: true,
    },
    input,
    {
      ...(hooks.signal !== undefined ? { signal: hooks.signal } : {}),
      inputLabel: hooks.inputLabel,
      onProgress: (p) =>
        hooks.onProgress?.({
          elapsedMs: p.elapsedMs,
          totalMs: o.durationMs,
          activeCalls: p.active,
          connected: p.streamed,
          refusals: 0,
          errors: p.failed,
          roundTripP50: undefined,
          chatsAnswered: 0,
        }),
    },
  );
  const sessionIds = phone.calls.flatMap((c) => (c.sessionId === null ? [] : [c.sessionId]));
  const server =
    o.apiKey !== undefined && sessionIds.length > 0
      ? await serverFigures(
          createParleyClient({ baseUrl: o.url, apiKey: o.apiKey, onDeprecation: () => undefined }),
          sessionIds.slice(0, SERVER_FIGURE_CALLS),
        )
      : null;
  return asLoadTestReport(o, phone, { startedAt, server, assistantId: hooks.assistantId, line });
}

function asLoadTestReport(
  o: LoadTestOptions,
  phone: PhoneSimReport,
  extra: {
    startedAt: Date;
    server: LoadTestReport['voice']['server'];
    assistantId: string | null;
    line: PhoneLine;
  },
): LoadTestReport {
  const s = phone.summary;
  const refusals = new Tally();
  if (s.rejected > 0) refusals.add('rejected (number not registered)', s.rejected);
  if (s.refused > 0) refusals.add('refused (spoken, hung up)', s.refused);
  const endReasons = new Tally();
  for (const [reason, n] of Object.entries(s.endReasons))
    if (reason !== 'rejected' && reason !== 'refused') endReasons.add(reason === 'hangup' ? 'client' : reason, n);
  const perInstance = new Tally();
  for (const c of phone.calls)
    if (c.sessionId !== null) perInstance.add(/^vs_([a-z0-9]+)_/.exec(c.sessionId)?.[1] ?? NO_ROUTE_KEY);
  return {
    tool: 'parley-loadtest',
    version: 1,
    target: {
      url: o.url,
      assistantId: extra.assistantId ?? `the assistant of ${extra.line.number}`,
      auth: o.apiKey !== undefined ? 'api-key' : 'keyless',
      temporaryAssistant: o.assistantId === undefined && o.apiKey !== undefined,
    },
    plan: {
      calls: o.calls,
      chats: 0,
      rampUpMs: o.rampUpMs,
      durationMs: o.durationMs,
      callMs: null,
      input: `${phone.plan.input}, phone calls to ${extra.line.number}`,
    },
    startedAt: extra.startedAt.toISOString(),
    endedAt: new Date().toISOString(),
    elapsedMs: phone.elapsedMs,
    interrupted: phone.interrupted,
    voice: {
      attempted: s.attempted,
      connected: s.streamed,
      ended: phone.calls.filter((c) => c.answer === 'stream' && c.error === null).length,
      peakConcurrent: s.peakConcurrent,
      mintMs: s.answerMs,
      connectMs: s.connectMs,
      firstAudioMs: s.firstAudioMs,
      roundTripMs: s.roundTripMs,
      echoDetected: s.roundTripMs !== null,
      refusals: refusals.counts,
      endReasons: endReasons.counts,
      perInstance: perInstance.counts,
      errors: s.errors,
      audio: {
        sentBytes: s.sentBytes,
        receivedBytes: s.receivedBytes,
        droppedLocallyBytes: 0,
        droppedByServerMs: 0,
        receivedWhileGateClosedBytes: 0,
        maxSendLagMs: s.maxSendLagMs,
      },
      heartbeats: { sent: 0, failed: 0 },
      server: extra.server,
    },
    chat: null,
    timeline: [],
  };
}
