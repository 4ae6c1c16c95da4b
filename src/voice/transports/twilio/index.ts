import type { AnySocketRoute } from '../../../http/index.js';
import type { CallerTransport, MintStream } from '../../session/transport.js';
import { phoneStreams, PHONE_STREAM_PATH, type PhoneStreamOptions } from './media-stream.js';

export type { PhoneStreamEvent, PhoneEventSink } from './relay.js';
export { carrierSignature, signatureMatches } from './codec.js';

/**
 * Phone calls through a carrier's media stream (Twilio `<Connect><Stream>`; Telnyx speaks the same messages): the
 * carrier opens `stream.url` (wss under PUBLIC_URL), signed with the number's auth token, and relays the caller's
 * audio as base64 μ-law 8 kHz. The call is minted with `pcmu` 8 kHz, so audio passes through untouched both ways.
 */
export interface TwilioTransport extends CallerTransport {
  readonly sockets: AnySocketRoute[];
  /** The webhook answered a call with this stream: accept the carrier's signed upgrade for it. */
  expect(sessionId: string, streamUrl: string, authToken: string): void;
}

export const TWILIO_TRANSPORT = 'twilio';

export function twilioTransport(options: PhoneStreamOptions): TwilioTransport {
  const streams = phoneStreams(options);
  return {
    name: TWILIO_TRANSPORT,
    timelineName: 'phone',
    sockets: [streams.route],
    connections: streams,
    stream: (base, sessionId) => streamOf(base, sessionId),
    expect: streams.expect,
  };
}

/** `wss://<base>/api/v1/voice/sessions/<id>/phone-stream`: no query string (the carrier refuses one). */
function streamOf(base: URL, sessionId: string): MintStream {
  const url = new URL(PHONE_STREAM_PATH.replace(':sessionId', sessionId), base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return { url: url.toString(), protocol: 'twilio.media-stream' };
}
