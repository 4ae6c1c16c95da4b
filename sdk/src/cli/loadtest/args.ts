import { parseArgs } from 'node:util';
import { parseAudioFormat, type AudioFormat } from '../../voice/formats.js';

/** Hard bounds: a typo must not turn a load test into a flood. */
export const LIMITS = { maxCalls: 2000, maxChats: 500, maxDurationMs: 10 * 60_000, maxCallSeconds: 3600 } as const;

export interface LoadTestOptions {
  url: string;
  /** Undefined: with an API key, a temporary assistant is created for the run and deleted after it. */
  assistantId: string | undefined;
  /** API key with the voice (and chat) scope; undefined for keyless. */
  apiKey: string | undefined;
  /** Keyless callers: the Origin to send (must be on the assistant's allowlist). */
  origin: string | undefined;
  /** Keyless: fetch a visitor signature from POST /api/v1/widget/sign before each call. */
  sign: boolean;
  recordingConsent: boolean;
  calls: number;
  chats: number;
  chatMessage: string;
  rampUpMs: number;
  durationMs: number;
  /** Length of one call; the caller dials again after it. Undefined: one call per caller, for the whole test. */
  callMs: number | undefined;
  /** A PCM16 mono 24 kHz WAV; undefined: synthetic speech. */
  inputPath: string | undefined;
  /** The calls' audio format (the input is converted to it once, before the test). Default PCM16 24 kHz. */
  audio?: AudioFormat;
  json: boolean;
  /** HTML report path; undefined: none. */
  reportPath: string | undefined;
  /** Skip the 3-second pause after the plan in a terminal. */
  yes: boolean;
  quiet: boolean;
  /** Read the server's relay residence from /metrics before and after (--metrics-token); undefined: not read. */
  metrics?: { url: string; token: string };
  /**
   * Phone calls instead (--phone): placed as a carrier does, through the phone simulator. Without a number, the API
   * key adds a temporary one (made-up carrier credentials) to the assistant and deletes it afterwards.
   */
  phone?: { number: string; accountSid: string; authToken: string } | { number: undefined };
}

export const USAGE = `parley-loadtest: concurrent voice calls (and chats) against a Parley deployment.

  parley-loadtest --url https://parley.example.com --assistant asst_... --api-key sk_live_... --calls 50 --duration 30s
  parley-loadtest --url http://127.0.0.1:3000 --assistant asst_... --origin https://shop.example --calls 10

Target and identity
  --url URL             Parley's base URL (required)
  --assistant ID        the assistant (public asst_ id; with a key, either id). Without it, an API key with
                        assistants:write creates a temporary assistant (voice on, the simulator's [sim:echo]
                        tag in its instructions) and deletes it afterwards
  --api-key KEY         an API key with the voice scope (chat too for --chats); or PARLEY_API_KEY
  --origin ORIGIN       keyless instead: the Origin to send (on the assistant's allowlist)
  --sign                keyless: sign each visitor through POST /api/v1/widget/sign
  --record-consent      send recordingConsent: true (needed when the assistant records)
Load
  --calls N             concurrent voice callers (default 10, at most ${LIMITS.maxCalls})
  --chats N             concurrent chat loops, each asking one question after another (default 0)
  --ramp-up DURATION    spread the starts over this long (default 5s)
  --duration DURATION   how long the load holds after the first start (default 30s, at most 10m)
  --call-length DUR     hang up and dial again after this long (default: one call for the whole test)
  --input FILE.wav      what callers say: a WAV (PCM16 or G.711, any rate), looped (default: synthetic speech)
  --audio FORMAT        the calls' audio: pcm16 (24 kHz, default), pcm16/16000, pcmu or pcma (G.711, 8 kHz);
                        the input is converted once before the test
  --chat-message TEXT   what chat loops ask (default: a short question)
Output
  --json                print the report as JSON on stdout (progress goes to stderr)
  --report FILE         write an HTML report (default parley-loadtest-report.html; --no-report for none)
  --yes                 start without the 3-second pause after the plan
  --quiet               no progress lines
Phone calls
  --phone               the calls are phone calls, placed as a carrier (Twilio) places them: the signed webhook, then
                        the media stream (μ-law 8 kHz, marks, clear). Without --number, the API key adds a temporary
                        number (made-up carrier credentials) to the assistant and deletes it afterwards
  --number E164         the registered number to call (with --account-sid and --auth-token or PARLEY_PHONE_AUTH_TOKEN)
  --account-sid SID     the carrier account SID the number was registered with
  --auth-token TOKEN    its auth token (signs the webhook and the stream)
Server figures
  --metrics-token TOKEN the server's METRICS_TOKEN (or PARLEY_METRICS_TOKEN): the report adds the time Parley itself
                        held each audio frame, from GET /metrics before and after the test, beside the round trip
  --metrics-url URL     where /metrics answers (default: --url + /metrics; through a proxy that is one instance)
Durations: 500ms, 30s, 2m, or plain seconds. Ctrl-C stops cleanly (calls are ended) and still reports.`;

/** "500ms" | "30s" | "2m" | "45" (seconds) -> milliseconds. */
export function parseDuration(text: string, name: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!match) throw new UsageError(`${name}: "${text}" is not a duration (e.g. 500ms, 30s, 2m)`);
  const value = Number(match[1]);
  return Math.round(match[2] === 'ms' ? value : match[2] === 'm' ? value * 60_000 : value * 1000);
}

export class UsageError extends Error {}

function count(text: string | undefined, name: string, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text)) throw new UsageError(`${name}: "${text}" is not a whole number`);
  const n = Number(text);
  if (n > max) throw new UsageError(`${name}: at most ${max} (asked for ${n})`);
  return n;
}

/** Parses and checks the command line; throws UsageError with a message a person can act on. */
export function parseOptions(argv: string[], env: Record<string, string | undefined> = {}): LoadTestOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      url: { type: 'string' },
      assistant: { type: 'string' },
      'api-key': { type: 'string' },
      origin: { type: 'string' },
      sign: { type: 'boolean', default: false },
      'record-consent': { type: 'boolean', default: false },
      calls: { type: 'string' },
      chats: { type: 'string' },
      'chat-message': { type: 'string' },
      'ramp-up': { type: 'string' },
      duration: { type: 'string' },
      'call-length': { type: 'string' },
      input: { type: 'string' },
      audio: { type: 'string' },
      json: { type: 'boolean', default: false },
      report: { type: 'string' },
      'no-report': { type: 'boolean', default: false },
      yes: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
      'metrics-token': { type: 'string' },
      'metrics-url': { type: 'string' },
      phone: { type: 'boolean', default: false },
      number: { type: 'string' },
      'account-sid': { type: 'string' },
      'auth-token': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  if (values.url === undefined) throw new UsageError('--url is required');
  let url: URL;
  try {
    url = new URL(values.url);
  } catch {
    throw new UsageError(`--url: "${values.url}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--url must be http:// or https://');
  const apiKey = values['api-key'] ?? (env['PARLEY_API_KEY'] || undefined);
  const phone = values.phone ? phoneOptions(values, apiKey, env) : undefined;
  if (apiKey !== undefined && values.origin !== undefined)
    throw new UsageError('use either --api-key (or PARLEY_API_KEY) or --origin (keyless), not both');
  if (apiKey === undefined && values.origin === undefined && phone?.number === undefined)
    throw new UsageError('give --api-key (or PARLEY_API_KEY), or --origin for keyless calls');
  if (values.sign && values.origin === undefined) throw new UsageError('--sign is for keyless calls (with --origin)');
  if (values.assistant === undefined && apiKey === undefined && phone?.number === undefined)
    throw new UsageError('keyless calls need --assistant (the public asst_ id)');
  const calls = count(values.calls, '--calls', 10, LIMITS.maxCalls);
  const chats = count(values.chats, '--chats', 0, LIMITS.maxChats);
  if (calls + chats === 0) throw new UsageError('nothing to do: --calls and --chats are both 0');
  const durationMs = parseDuration(values.duration ?? '30s', '--duration');
  if (durationMs < 1000 || durationMs > LIMITS.maxDurationMs)
    throw new UsageError('--duration must be between 1s and 10m');
  const rampUpMs = parseDuration(values['ramp-up'] ?? '5s', '--ramp-up');
  if (rampUpMs > durationMs) throw new UsageError('--ramp-up cannot be longer than --duration');
  const callMs =
    values['call-length'] === undefined ? undefined : parseDuration(values['call-length'], '--call-length');
  if (callMs !== undefined && (callMs < 1000 || callMs > LIMITS.maxCallSeconds * 1000))
    throw new UsageError('--call-length must be between 1s and 1h');
  let audio: AudioFormat | undefined;
  try {
    audio = values.audio === undefined ? undefined : parseAudioFormat(values.audio);
  } catch (err) {
    throw new UsageError(`--audio: ${(err as Error).message}`);
  }
  const metricsToken = values['metrics-token'] ?? (env['PARLEY_METRICS_TOKEN'] || undefined);
  if (values['metrics-url'] !== undefined && metricsToken === undefined)
    throw new UsageError('--metrics-url needs --metrics-token (or PARLEY_METRICS_TOKEN)');
  const base = url.toString().replace(/\/+$/, '');
  let metricsUrl = `${base}/metrics`;
  if (values['metrics-url'] !== undefined) {
    try {
      metricsUrl = new URL(values['metrics-url']).toString();
    } catch {
      throw new UsageError(`--metrics-url: "${values['metrics-url']}" is not a URL`);
    }
  }
  if (phone !== undefined && (chats > 0 || audio !== undefined))
    throw new UsageError('--phone calls are μ-law 8 kHz voice only: no --chats or --audio with it');
  return {
    ...(metricsToken !== undefined ? { metrics: { url: metricsUrl, token: metricsToken } } : {}),
    ...(phone !== undefined ? { phone, audio: { format: 'pcmu' as const, sampleRateHz: 8000 as const } } : {}),
    url: base,
    assistantId: values.assistant,
    apiKey,
    origin: values.origin,
    sign: values.sign,
    recordingConsent: values['record-consent'],
    calls,
    chats,
    chatMessage: values['chat-message'] ?? 'What can you help me with?',
    rampUpMs,
    durationMs,
    callMs,
    inputPath: values.input,
    ...(audio !== undefined ? { audio } : {}),
    ...(phone !== undefined ? { audio: { format: 'pcmu' as const, sampleRateHz: 8000 as const } } : {}),
    json: values.json,
    reportPath: values['no-report'] ? undefined : (values.report ?? 'parley-loadtest-report.html'),
    yes: values.yes,
    quiet: values.quiet,
  };
}

function phoneOptions(
  values: { number?: string | undefined; 'account-sid'?: string | undefined; 'auth-token'?: string | undefined },
  apiKey: string | undefined,
  env: Record<string, string | undefined>,
): NonNullable<LoadTestOptions['phone']> {
  const authToken = values['auth-token'] ?? (env['PARLEY_PHONE_AUTH_TOKEN'] || undefined);
  if (values.number === undefined) {
    if (apiKey === undefined)
      throw new UsageError('--phone needs --number with its --account-sid and --auth-token, or an API key');
    return { number: undefined };
  }
  if (!/^\+[1-9][0-9]{6,14}$/.test(values.number))
    throw new UsageError('--number must be E.164 (+ and 7 to 15 digits)');
  if (values['account-sid'] === undefined || !/^AC[0-9a-fA-F]{32}$/.test(values['account-sid']))
    throw new UsageError('--number needs --account-sid (AC + 32 hex digits)');
  if (authToken === undefined) throw new UsageError('--number needs --auth-token (or PARLEY_PHONE_AUTH_TOKEN)');
  return { number: values.number, accountSid: values['account-sid'], authToken };
}
