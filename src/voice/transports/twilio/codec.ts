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

const MEDIA_PREFIX = Buffer.from('{"event":"media",');
const MARK_PREFIX = Buffer.from('{"event":"mark",');
const PAYLOAD_KEY = Buffer.from('"payload":"');
const NAME_KEY = Buffer.from('"name":"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSE_BRACE = 0x7d;

/**
 * The string value of `key` in a frame that starts with `prefix`, read without parsing the JSON, or undefined when
 * the frame is not of that plain shape (another key order, the key twice, an escaped character): the caller then
 * parses it in full. For the frames that come most often: `media` (50 a second per call) and the echoed `mark`s.
 */
function plainValue(bytes: Buffer, prefix: Buffer, key: Buffer, encoding: 'latin1' | 'utf8'): string | undefined {
  if (bytes.length < prefix.length || bytes[bytes.length - 1] !== CLOSE_BRACE) return undefined;
  if (bytes.compare(prefix, 0, prefix.length, 0, prefix.length) !== 0) return undefined;
  const at = bytes.indexOf(key, prefix.length);
  if (at < 0 || bytes.indexOf(key, at + key.length) >= 0) return undefined;
  const start = at + key.length;
  const end = bytes.indexOf(QUOTE, start);
  if (end < 0 || bytes.indexOf(BACKSLASH, start) !== -1) return undefined;
  return bytes.toString(encoding, start, end);
}

function plainFrame(bytes: Buffer): CarrierMessage | undefined {
  const payload = plainValue(bytes, MEDIA_PREFIX, PAYLOAD_KEY, 'latin1');
  if (payload !== undefined) return { event: 'media', payload };
  const name = plainValue(bytes, MARK_PREFIX, NAME_KEY, 'utf8');
  return name === undefined ? undefined : { event: 'mark', name };
}

/** One carrier text frame, or undefined for anything this protocol does not carry. */
export function readCarrierMessage(data: ArrayBuffer, maxBytes: number): CarrierMessage | undefined {
  if (data.byteLength > maxBytes) return undefined;
  const bytes = Buffer.from(data);
  const plain = plainFrame(bytes);
  if (plain !== undefined) return plain;
  let value: any;
  try {
    value = JSON.parse(bytes.toString('utf8'));
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
