import t from 'tap';
import { mulawSilence, mulawSpeech, openCarrierStream, phoneMint } from '../telephony/carrier.js';
import { transportContract } from './transport-contract.js';

/** The phone transport (a carrier's Media Streams WebSocket), minted by a signed call webhook, against the contract. */
transportContract(t, {
  name: 'twilio',
  stream: { protocol: 'twilio.media-stream', url: /^ws:\/\/.+\/api\/v1\/voice\/sessions\/vs_[^/?]+\/phone-stream$/ },
  mint: phoneMint,
  async connect(_app, minted) {
    const stream = await openCarrierStream((minted.stream as { url: string }).url, minted.controlToken);
    return {
      speak: (frames) => {
        for (const frame of mulawSpeech(frames)) stream.media(frame);
      },
      silence: (frames) => {
        for (const frame of mulawSilence(frames)) stream.media(frame);
      },
      heardBytes: () => stream.heardBytes(),
      ended: async () => {
        const closed = await stream.closed;
        if (closed.code !== 1000) throw new Error(`the stream closed ${closed.code}, not 1000, after the end`);
        return { endReason: closed.reason === 'ended' ? null : closed.reason };
      },
      hangUp: () => stream.ws.terminate(),
    };
  },
  async connectWithWrongCredential(_app, minted) {
    const url = (minted.stream as { url: string }).url;
    const refused = await openCarrierStream(url, minted.controlToken, { signature: 'AAAA' }).catch(
      (e: { status?: number }) => e,
    );
    return (refused as { status?: number }).status ?? 0;
  },
});
