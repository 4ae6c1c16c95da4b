import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The carrier's Media Streams messages (Twilio's documented WebSocket protocol; Telnyx speaks the same). In:
 * `connected`, `start` (`streamSid`, `callSid`, `mediaFormat`, `customParameters`), `media` (base64 μ-law 8 kHz),
 * `dtmf`, `mark`, `stop`. Out: `media`, `mark`, `clear`, all JSON text frames.
 */
export type CarrierMessage =
  | { event: 'connected' }
  | { event: 'start'; streamSid: string; callSid: string; token: string | undefined }
  | { event: 'media'; payload: string }
  | { event: 'dtmf'; digit: string }
  | { event: 'mark'; name: string }
  | { event: 'stop' };

/** One carrier text frame, or undefined for anything this protocol does not carry. */
export function readCarrierMessage(data: ArrayBuffer, maxBytes: number): CarrierMessage | undefined {
  if (data.byteLength > maxBytes) return undefined;
  let value: any;
  try {
    value = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  switch (value.event) {
    case 'connected':
      return { event: 'connected' };
    case 'start': {
      const start = value.start ?? {};
      const params = start.customParameters ?? {};
      return {
        event: 'start',
        streamSid: String(start.streamSid ?? value.streamSid ?? ''),
        callSid: String(start.callSid ?? ''),
        token: typeof params.token === 'string' ? params.token : undefined,
      };
    }
    case 'media':
      return typeof value.media?.payload === 'string' ? { event: 'media', payload: value.media.payload } : undefined;
    case 'dtmf': {
      const digit = value.dtmf?.digit;
      return typeof digit === 'string' && /^[0-9*#A-D]$/.test(digit) ? { event: 'dtmf', digit } : undefined;
    }
    case 'mark':
      return typeof value.mark?.name === 'string' ? { event: 'mark', name: value.mark.name } : undefined;
    case 'stop':
      return { event: 'stop' };
    default:
      return undefined;
  }
}

export const encodeOut = {
  media: (streamSid: string, audio: Uint8Array): string =>
    `{"event":"media","streamSid":${JSON.stringify(streamSid)},"media":{"payload":"${Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength).toString('base64')}"}}`,
  mark: (streamSid: string, name: string): string => JSON.stringify({ event: 'mark', streamSid, mark: { name } }),
  clear: (streamSid: string): string => JSON.stringify({ event: 'clear', streamSid }),
};

/**
 * The carrier's request signature: base64 HMAC-SHA1 with the account's auth token over the URL it called followed
 * by each POST parameter's name and value, sorted by name (none for a stream's upgrade).
 */
export function carrierSignature(authToken: string, url: string, params: Record<string, string> = {}): string {
  let data = url;
  for (const name of Object.keys(params).sort()) data += name + params[name];
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** Constant-time check of a received signature (docs/house-rules.md rule 19). */
export function signatureMatches(expected: string, received: string | undefined): boolean {
  if (received === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(received);
  return a.length === b.length && timingSafeEqual(a, b);
}
