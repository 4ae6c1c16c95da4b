import { execFileSync } from 'node:child_process';
import { findLocalVoiceEngines, type VoiceAudioFormat } from '../../../src/providers/voice/index.js';
import { bearer } from '../../helpers/identity.js';
import { waitFor } from '../../voice/helpers.js';

/** The local engines of this machine (the suite's install step brings them); the tests need them. */
export function localEngines() {
  const found = findLocalVoiceEngines('/usr/local/bin:/usr/bin:/bin');
  if (found.engines === undefined) throw new Error(`local voice engines missing: ${found.missing.join(', ')}`);
  return found.engines;
}

const SOX_ENCODING = { pcm16: ['-e', 'signed', '-b', '16'], pcmu: ['-e', 'u-law'], pcma: ['-e', 'a-law'] } as const;

/** Raw samples of a WAV in a call's format (sox converts and resamples). */
export function wavToCallAudio(wav: Buffer, audio: VoiceAudioFormat): Buffer {
  return execFileSync(
    'sox',
    ['-t', 'wav', '-', '-t', 'raw', '-r', String(audio.sampleRateHz), '-c', '1', ...SOX_ENCODING[audio.format], '-'],
    { input: wav },
  );
}

/** A sentence as espeak-ng says it, in the call's format. */
export function spoken(text: string, audio: VoiceAudioFormat): Buffer {
  return wavToCallAudio(execFileSync('espeak-ng', ['-v', 'en-us', '--stdout', text]), audio);
}

/** A call's audio back as a WAV (for recognizing what the assistant said). */
export function callAudioToWav(raw: Buffer, audio: VoiceAudioFormat, rate = 16000): Buffer {
  return execFileSync(
    'sox',
    [
      '-t',
      'raw',
      '-r',
      String(audio.sampleRateHz),
      '-c',
      '1',
      ...SOX_ENCODING[audio.format],
      '-',
      '-t',
      'wav',
      '-r',
      String(rate),
      '-b',
      '16',
      '-e',
      'signed',
      '-',
    ],
    { input: raw },
  );
}

/** Splits audio into 20 ms frames of its format. */
export function framesOf(raw: Buffer, audio: VoiceAudioFormat): Buffer[] {
  const size = (audio.sampleRateHz / 50) * (audio.format === 'pcm16' ? 2 : 1);
  const out: Buffer[] = [];
  for (let at = 0; at < raw.length; at += size) {
    const frame = Buffer.alloc(size, audio.format === 'pcmu' ? 0xff : audio.format === 'pcma' ? 0xd5 : 0);
    raw.copy(frame, 0, at, Math.min(raw.length, at + size));
    out.push(frame);
  }
  return out;
}

/** Silence of the format, in 20 ms frames. */
export function silence(ms: number, audio: VoiceAudioFormat): Buffer[] {
  const size = (audio.sampleRateHz / 50) * (audio.format === 'pcm16' ? 2 : 1);
  const byte = audio.format === 'pcmu' ? 0xff : audio.format === 'pcma' ? 0xd5 : 0;
  return Array.from({ length: Math.ceil(ms / 20) }, () => Buffer.alloc(size, byte));
}

/** The samples of a WAV (after its `data` chunk header). */
export function wavSamples(wav: Buffer): Buffer {
  const at = wav.indexOf('data', 12);
  return wav.subarray(at + 8);
}

/**
 * Adds a text document to an assistant over the API and, when it was accepted, waits until it is ready to answer
 * from. Returns the create's HTTP status for the caller to assert.
 */
export async function addReadyTextDocument(
  baseUrl: string,
  secret: string,
  assistantId: string,
  name: string,
  text: string,
): Promise<number> {
  const headers = { ...bearer(secret), 'content-type': 'application/json' };
  const added = await fetch(`${baseUrl}/api/v1/documents`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ assistantId, type: 'text', name, text }),
  });
  if (added.status !== 201) return added.status;
  const { document } = (await added.json()) as { document: { id: string } };
  await waitFor(async () => {
    const res = await fetch(`${baseUrl}/api/v1/documents/${document.id}`, { headers });
    const body = (await res.json()) as { document?: { status: string }; status?: string };
    return (body.document?.status ?? body.status) === 'ready';
  }, 'the document to be ready');
  return added.status;
}
