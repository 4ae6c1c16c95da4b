import { Audio, PeerConnection, type DataChannel, type Track } from 'node-datachannel';
import { MULAW_TO_LINEAR, linearToMulaw } from '../../../src/providers/voice/index.js';

/**
 * A caller's WebRTC end for Node tests (the browser's role): a real node-datachannel peer that offers audio (Opus and
 * PCMU, as browsers do) and a data channel, talks a loud 440 Hz tone as PCMU packets and measures what it hears.
 */
export class WebRtcCaller {
  readonly pc = new PeerConnection('caller', { iceServers: [], disableAutoNegotiation: true });
  private track: Track;
  private channel: DataChannel;
  private timer: NodeJS.Timeout | undefined;
  private seq = 1;
  private ts = 0;
  connected = false;
  packetsIn = 0;
  /** Largest absolute sample heard from the other side (PCM16 scale). */
  peakIn = 0;
  /** Packets heard whose audio is not silence (a sample above 1000 on the PCM16 scale). */
  voicedPacketsIn = 0;

  constructor() {
    const audio = new Audio('0', 'SendRecv');
    audio.addOpusCodec(111);
    audio.addAudioCodec(0, 'PCMU/8000');
    audio.addSSRC(4242, 'caller', 'caller-stream', 'mic');
    this.track = this.pc.addTrack(audio);
    this.track.onMessage((packet) => {
      if (packet.length <= 12 || (packet[1]! & 0x7f) !== 0) return;
      this.packetsIn++;
      let peak = 0;
      for (let i = 12; i < packet.length; i++) peak = Math.max(peak, Math.abs(MULAW_TO_LINEAR[packet[i]!]!));
      this.peakIn = Math.max(this.peakIn, peak);
      if (peak > 1000) this.voicedPacketsIn++;
    });
    this.channel = this.pc.createDataChannel('oai-events');
    // node-datachannel frees native callbacks (which keep the process alive) only from onClosed.
    this.channel.onClosed(() => undefined);
    this.track.onClosed(() => undefined);
    this.pc.onStateChange((state) => {
      if (state === 'connected') this.connected = true;
    });
  }

  /**
   * The offer, without its candidates: the answering peer then learns this one's address from its first checks, which
   * start only once it has the answer. With candidates, the answerer (DTLS client) could reach this peer before the
   * answer did, and libdatachannel closes a connection whose DTLS starts before it knows the remote fingerprint (a
   * browser waits instead, as Chromium does with its mDNS-hidden candidates anyway).
   */
  offer(): Promise<string> {
    return new Promise((resolve) => {
      this.pc.onGatheringStateChange((state) => {
        if (state === 'complete')
          resolve(this.pc.localDescription()!.sdp.replace(/^a=(candidate|end-of-candidates).*\r?\n/gm, ''));
      });
      this.pc.setLocalDescription('offer');
    });
  }

  answer(sdp: string): void {
    this.pc.setRemoteDescription(sdp, 'answer');
  }

  /** Talk (a tone) or stay silent, one PCMU packet per 20 ms. */
  talk(voiced: boolean): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => {
      if (!this.track.isOpen()) return;
      const packet = Buffer.alloc(12 + 160);
      packet[0] = 0x80;
      packet[1] = 0;
      packet.writeUInt16BE(this.seq++ & 0xffff, 2);
      packet.writeUInt32BE((this.ts += 160) >>> 0, 4);
      packet.writeUInt32BE(4242, 8);
      for (let i = 0; i < 160; i++)
        packet[12 + i] = linearToMulaw(
          voiced ? Math.round(8000 * Math.sin((2 * Math.PI * 440 * (this.ts + i)) / 8000)) : 0,
        );
      try {
        this.track.sendMessageBinary(packet);
      } catch {
        // The far end hung up: the track closes on libdatachannel's own thread, so it can close after isOpen().
      }
    }, 20);
  }

  close(): void {
    clearInterval(this.timer);
    this.track.close();
    this.channel.close();
    this.pc.close();
  }
}
