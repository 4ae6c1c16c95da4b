import t from 'tap';
import { mediaUrl, openMedia, speechFrames } from './media-client.js';
import { transportContract } from './transport-contract.js';

/** The WebSocket transport (parley.voice.v1) against the transport contract. */
transportContract(t, {
  name: 'websocket',
  stream: { protocol: 'parley.voice.v1', url: /^ws:\/\/.+\/api\/v1\/voice\/sessions\/vs_[^/]+\/stream\?token=/ },
  async connect(app, minted) {
    const media = await openMedia(mediaUrl(app, minted));
    return {
      speak: (frames) => {
        for (const frame of speechFrames(frames)) media.send(frame);
      },
      silence: (frames) => {
        for (let i = 0; i < frames; i++) media.send(Buffer.alloc(960));
      },
      heardBytes: () => media.binaryBytes(),
      ended: async () => {
        const event = await media.waitText((e) => e.type === 'ended', 'the ended event');
        const closed = await media.closed;
        if (closed.code !== 1000) throw new Error(`the socket closed ${closed.code}, not 1000, after the end`);
        return { endReason: event.endReason };
      },
      hangUp: () => media.ws.terminate(),
    };
  },
  async connectWithWrongCredential(app, minted) {
    const refused = await openMedia(mediaUrl(app, minted, 'v1.9999999999.AAAA')).catch((e: { status?: number }) => e);
    return (refused as { status?: number }).status ?? 0;
  },
});
