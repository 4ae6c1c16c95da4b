import type { AnySocketRoute } from '../../../http/index.js';
import type { CallerTransport, MintStream } from '../../session/transport.js';
import { mediaSockets, MEDIA_SOCKET_PATH, type MediaSessionLocator, type MediaSocketOptions } from './media-socket.js';
import { PROTOCOL } from './codec.js';

/**
 * The WebSocket transport: the caller (browser widget, SDK, a bridge) opens `stream.url`, a WebSocket speaking
 * `parley.voice.v1` (docs/voice-protocol.md): binary frames carry audio in the call's format both ways, text frames
 * carry state, captions and notices. Its presence signal is the socket itself: open = the caller is here, close = gone.
 */
export interface WebSocketTransport extends CallerTransport {
  readonly sockets: AnySocketRoute[];
}

export function websocketTransport(service: MediaSessionLocator, options: MediaSocketOptions = {}): WebSocketTransport {
  const media = mediaSockets(service, options);
  return {
    name: 'websocket',
    sockets: [media.route],
    connections: media,
    stream: (base, sessionId, controlToken) => streamOf(base, sessionId, controlToken),
  };
}

/** `ws(s)://<base>/api/v1/voice/sessions/<id>/stream?token=<controlToken>` (wss when the base is https). */
function streamOf(base: URL, sessionId: string, controlToken: string): MintStream {
  const url = new URL(MEDIA_SOCKET_PATH.replace(':sessionId', sessionId), base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('token', controlToken);
  return { url: url.toString(), protocol: PROTOCOL };
}
