/** The phone simulator's command line, and the callers' input as μ-law (shared with `parley-loadtest --phone`). */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { parseDuration, UsageError } from '../loadtest/args.js';
import { fromPcm16 } from '../../voice/formats.js';
import { pcmFromWav, syntheticSpeech } from '../../voice/pcm.js';
import type { PhoneSimOptions } from './run.js';

export const PHONE_SIM_USAGE = `phone-sim: simulated phone calls to an assistant's number, placed as the carrier (Twilio) places them.

  npm run phone-sim -- --url http://127.0.0.1:3000 --number +15550001234 --account-sid AC... --auth-token ... \\
    --calls 2 --duration 30s

  --url URL             Parley's base URL (required)
  --voice-url URL       the voice webhook the carrier calls and signs (default: --url + /api/v1/telephony/twilio/voice;
                        it must be what PUBLIC_URL makes it)
  --number E164         the number called: registered in Parley (POST /api/v1/phone-numbers) (required)
  --from E164           the caller's number (default +1555010 and the call's index)
  --account-sid SID     the carrier account SID the number was registered with (required)
  --auth-token TOKEN    its auth token: signs the webhook and the stream (or PHONE_SIM_AUTH_TOKEN) (required)
  --calls N             concurrent calls (default 1, at most 500)
  --duration DURATION   how long each caller stays on the line (default 30s, at most 10m)
  --ramp-up DURATION    spread the calls' starts over this long (default 0s)
  --input FILE.wav      what callers say: a WAV (PCM16 or G.711, any rate), looped (default: synthetic speech)
  --json                print the report as JSON on stdout
Each call: the signed webhook, its TwiML, then the signed media stream (connected, start with the stream's
parameters, 20 ms μ-law media frames at real-time pace, marks echoed as the audio before them is played, clear
honoured by dropping the queued audio, stop when the caller hangs up).

  npm run phone-sim -- carrier --help   runs a simulated carrier for calls Parley places (TWILIO_API_BASE_URL).`;

export interface CliOptions extends PhoneSimOptions {
  inputPath: string | undefined;
  json: boolean;
}

export function parsePhoneSimArgs(argv: string[], env: Record<string, string | undefined>): CliOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      url: { type: 'string' },
      'voice-url': { type: 'string' },
      number: { type: 'string' },
      from: { type: 'string' },
      'account-sid': { type: 'string' },
      'auth-token': { type: 'string' },
      calls: { type: 'string' },
      duration: { type: 'string' },
      'ramp-up': { type: 'string' },
      input: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  const need = (name: string, value: string | undefined): string => {
    if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
    return value;
  };
  const url = need('url', values.url);
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError('--url must be http:// or https://');
  const number = need('number', values.number);
  if (!/^\+[1-9][0-9]{6,14}$/.test(number)) throw new UsageError('--number must be E.164 (+ and 7 to 15 digits)');
  if (values.from !== undefined && !/^\+[1-9][0-9]{6,14}$/.test(values.from))
    throw new UsageError('--from must be E.164 (+ and 7 to 15 digits)');
  const accountSid = need('account-sid', values['account-sid']);
  if (!/^AC[0-9a-fA-F]{32}$/.test(accountSid)) throw new UsageError('--account-sid must be AC + 32 hex digits');
  const authToken = need('auth-token', values['auth-token'] ?? (env['PHONE_SIM_AUTH_TOKEN'] || undefined));
  const calls = Number(values.calls ?? '1');
  if (!Number.isInteger(calls) || calls < 1 || calls > 500) throw new UsageError('--calls must be 1 to 500');
  const durationMs = parseDuration(values.duration ?? '30s', '--duration');
  if (durationMs < 1000 || durationMs > 600_000) throw new UsageError('--duration must be between 1s and 10m');
  const rampUpMs = parseDuration(values['ramp-up'] ?? '0s', '--ramp-up');
  if (rampUpMs > 600_000) throw new UsageError('--ramp-up must be at most 10m');
  return {
    url: url.replace(/\/+$/, ''),
    ...(values['voice-url'] !== undefined ? { voiceUrl: values['voice-url'] } : {}),
    number,
    ...(values.from !== undefined ? { from: values.from } : {}),
    accountSid,
    authToken,
    calls,
    durationMs,
    rampUpMs,
    inputPath: values.input,
    json: values.json,
  };
}

/** What callers say, as μ-law 8 kHz (converted once, never per frame). */
export async function phoneInput(inputPath: string | undefined): Promise<{ mulaw: Uint8Array; label: string }> {
  const mulaw = { format: 'pcmu', sampleRateHz: 8000 } as const;
  if (inputPath === undefined) {
    const speech = syntheticSpeech({ utterances: 4, speechMs: 1500, pauseMs: 2500, seed: 7 });
    return { mulaw: fromPcm16(speech, mulaw), label: 'synthetic speech (1.5 s phrases, 2.5 s pauses)' };
  }
  const pcm = pcmFromWav(await readFile(inputPath), inputPath);
  if (pcm.byteLength < 960) throw new UsageError(`${inputPath} holds less than 20 ms of audio`);
  return { mulaw: fromPcm16(pcm, mulaw), label: `${inputPath} (${(pcm.byteLength / 48_000).toFixed(1)} s, looped)` };
}
