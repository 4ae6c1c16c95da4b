#!/usr/bin/env node
/**
 * parley-loadtest: N concurrent voice calls (and chats) against a Parley deployment, then a report.
 * `npx parley-loadtest --help` (from @parley/sdk) or `npm run loadtest -- --help` in the repository.
 *
 * Output: the plan and live progress on stderr; the summary (or with --json the report) on stdout; an HTML report
 * file. Exit code 0; 1 when nothing connected (or usage error); 130 after Ctrl-C (the report is still written).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { WebSocket } from 'ws';
import { createParleyClient } from '../../client.js';
import { ParleyError } from '../../errors.js';
import { DEFAULT_AUDIO, fromPcm16 } from '../../voice/formats.js';
import { pcmFromWav, syntheticSpeech } from '../../voice/pcm.js';
import { parseOptions, USAGE, UsageError, type LoadTestOptions } from './args.js';
import { dropPhoneLine, phoneLineFor, runPhoneLoadTest } from './phone.js';
import { reportHtml } from './report-html.js';
import { runLoadTest, type Progress } from './run.js';
import { scrapeMetrics, serverFiguresBetween, serverText, type Scrape } from './server-figures.js';
import { planText, progressText, summaryText } from './summary.js';

/** ws with per-message compression off: PCM barely compresses and deflate would cost the load generator CPU. */
class PlainWebSocket extends WebSocket {
  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols, { perMessageDeflate: false });
  }
}

/** What callers say, in the calls' format (PCM16 24 kHz input converted once, here, never per frame). */
async function loadInput(o: LoadTestOptions): Promise<{ pcm: Uint8Array; label: string }> {
  const audio = o.audio ?? DEFAULT_AUDIO;
  if (o.inputPath === undefined) {
    // Four utterances of 1.5 s with 2.5 s pauses (16 s, looped): the provider hears turns and answers them.
    return {
      pcm: fromPcm16(syntheticSpeech({ utterances: 4, speechMs: 1500, pauseMs: 2500, seed: 7 }), audio),
      label: 'synthetic speech (1.5 s phrases, 2.5 s pauses)',
    };
  }
  const file = await readFile(o.inputPath);
  const pcm = pcmFromWav(file, o.inputPath);
  if (pcm.byteLength < 960) throw new UsageError(`${o.inputPath} holds less than 20 ms of audio`);
  return { pcm: fromPcm16(pcm, audio), label: `${o.inputPath} (${(pcm.byteLength / 48_000).toFixed(1)} s, looped)` };
}

async function createTemporaryAssistant(o: LoadTestOptions): Promise<{ id: string; publicId: string } | null> {
  const parley = createParleyClient({ baseUrl: o.url, apiKey: o.apiKey!, retry: true });
  try {
    const { assistant } = await parley.POST('/api/v1/assistants', {
      body: {
        name: `parley-loadtest ${new Date().toISOString()}`,
        // [sim:echo]: Parley's voice simulator sends each caller frame back (the round trip); a real provider ignores it.
        instructions: 'A load-test assistant: answer in one short sentence. [sim:echo]',
        settings: { voice: { enabled: true, recording: 'off', requireConsent: false } },
      },
    });
    process.stderr.write(`created temporary assistant ${assistant.publicId}\n`);
    return { id: assistant.id, publicId: assistant.publicId };
  } catch (err) {
    const why = err instanceof ParleyError ? `${err.status} ${err.reason ?? err.code}: ${err.message}` : String(err);
    process.stderr.write(
      `could not create a temporary assistant (${why}); pass --assistant asst_... or use a key with assistants:write\n`,
    );
    return null;
  }
}

async function deleteTemporaryAssistant(o: LoadTestOptions, id: string): Promise<void> {
  const parley = createParleyClient({ baseUrl: o.url, apiKey: o.apiKey!, retry: true });
  await parley.DELETE('/api/v1/assistants/{assistantId}', { params: { path: { assistantId: id } } }).then(
    () => process.stderr.write('deleted the temporary assistant\n'),
    (err: unknown) => process.stderr.write(`could not delete the temporary assistant ${id}: ${String(err)}\n`),
  );
}

async function main(argv: string[]): Promise<number> {
  let options: LoadTestOptions | 'help';
  try {
    options = parseOptions(argv, process.env);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}\n`);
    return 1;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const o = options;
  let input: { pcm: Uint8Array; label: string };
  try {
    input = await loadInput(o);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }

  process.stderr.write(`${planText(o, input.label)}\n`);
  const stop = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    process.stderr.write('\nstopping: ending the calls and writing the report (Ctrl-C again to quit at once)\n');
    stop.abort();
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);

  const tty = process.stderr.isTTY === true;
  if (tty && process.stdin.isTTY === true && !o.yes) {
    process.stderr.write('starting in 3 s (Ctrl-C cancels; --yes skips this pause)\n');
    await new Promise<void>((r) => {
      const timer = setTimeout(r, 3000);
      stop.signal.addEventListener('abort', () => (clearTimeout(timer), r()), { once: true });
    });
    if (stop.signal.aborted) return 130;
  }

  let lastPlain = Number.NEGATIVE_INFINITY; // the first line at once, then every 5 s
  const onProgress = (p: Progress) => {
    if (o.quiet) return;
    const line = progressText(p, o.chats > 0);
    if (tty) process.stderr.write(`\r\x1b[2K${line}`);
    else if (p.elapsedMs - lastPlain >= 5000) {
      lastPlain = p.elapsedMs;
      process.stderr.write(`${line}\n`);
    }
  };
  // Without --assistant: a temporary one for this run, deleted afterwards (also after Ctrl-C).
  const calledNumber = o.phone !== undefined ? o.phone.number : undefined;
  const temporary =
    o.assistantId === undefined && calledNumber === undefined ? await createTemporaryAssistant(o) : undefined;
  if (temporary === null) return 1;
  const scrape = async (): Promise<Scrape | string> =>
    o.metrics === undefined
      ? 'not read'
      : scrapeMetrics(o.metrics.url, o.metrics.token).catch((err: unknown) => (err as Error).message);
  const metricsBefore = await scrape();
  let report;
  const assistantId = o.assistantId ?? temporary?.publicId;
  try {
    if (o.phone !== undefined) {
      // Phone calls: through a number (the one given, or a temporary one on the assistant).
      const line = await phoneLineFor(o, assistantId!);
      try {
        report = await runPhoneLoadTest(o, line, input.pcm, {
          signal: stop.signal,
          onProgress,
          inputLabel: input.label,
          assistantId: assistantId ?? null,
        });
      } finally {
        await dropPhoneLine(o, line);
      }
    } else {
      report = await runLoadTest({ ...o, assistantId: assistantId! }, input.pcm, {
        WebSocket: PlainWebSocket,
        signal: stop.signal,
        onProgress,
        inputLabel: input.label,
        temporaryAssistant: temporary !== undefined,
      });
    }
  } finally {
    if (temporary !== undefined) await deleteTemporaryAssistant(o, temporary.id);
  }
  if (tty && !o.quiet) process.stderr.write('\n');
  if (o.metrics !== undefined) {
    const metricsAfter = await scrape();
    report.server =
      typeof metricsBefore === 'string' || typeof metricsAfter === 'string'
        ? {
            metricsUrl: o.metrics.url,
            callerToProviderMs: null,
            providerToCallerMs: null,
            appendWaitMs: null,
            error: typeof metricsBefore === 'string' ? metricsBefore : (metricsAfter as string),
          }
        : serverFiguresBetween(o.metrics.url, metricsBefore, metricsAfter);
  }

  const summary = summaryText(report) + serverText(report.server);
  if (o.reportPath !== undefined) {
    const path = resolve(o.reportPath);
    await writeFile(path, reportHtml(report, summary));
    process.stderr.write(`report: ${path}\n`);
  }
  await new Promise<void>((r) =>
    process.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : `${summary}\n`, () => r()),
  );
  if (report.interrupted) return 130;
  const nothing = (o.calls > 0 && report.voice.connected === 0) || (report.chat !== null && report.chat.answered === 0);
  return nothing ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `parley-loadtest failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
