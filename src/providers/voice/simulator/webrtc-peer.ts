import { PeerConnection, type DataChannel, type Track } from 'node-datachannel';
import { PcmuPacketizer, pcm24kToPcmu, pcmuOnlyAnswer, pcmuPayloadOf, pcmuToPcm24k } from './rtp.js';

export interface SimPeerEvents {
  /** Caller audio that arrived, as PCM16LE 24 kHz. */
  audio(pcm24k: Buffer): void;
  /** The peer connection failed or closed (the caller is gone). */
  gone(): void;
  /** ICE/DTLS connected (the caller reached the simulator). */
  connected?(): void;
}

const GATHER_TIMEOUT_MS = 5000;

/**
 * The simulator's end of a caller's WebRTC connection: a real peer (libdatachannel through node-datachannel: ICE,
 * DTLS-SRTP, SCTP) that answers the browser's offer, takes the caller's PCMU packets and sends its speech back as PCMU
 * packets. The browser's data channel is accepted and left silent (the session is created with no client events
 * allowed; everything the caller could send there is refused by construction: the simulator never reads it).
 */
export class SimPeer {
  private track: Track | undefined;
  private readonly channels: DataChannel[] = [];
  private readonly packetizer = new PcmuPacketizer();
  private closed = false;
  packetsIn = 0;
  packetsOut = 0;

  private constructor(
    private readonly pc: PeerConnection,
    private readonly events: SimPeerEvents,
  ) {}

  /** Answer an offer: resolves with the peer and the complete answer (all candidates gathered: no trickle). */
  static async answer(offerSdp: string, events: SimPeerEvents): Promise<{ peer: SimPeer; answerSdp: string }> {
    const pc = new PeerConnection('parley-simulator', { iceServers: [] });
    const peer = new SimPeer(pc, events);
    pc.onTrack((track) => {
      if (track.type() !== 'audio' && peer.track !== undefined) return;
      peer.track = track;
      // node-datachannel frees a track's native callbacks (which keep the process alive) only from its onClosed.
      track.onClosed(() => undefined);
      track.onMessage((packet) => {
        const payload = pcmuPayloadOf(packet);
        if (payload === undefined) return;
        peer.packetsIn++;
        events.audio(pcmuToPcm24k(payload));
      });
    });
    pc.onDataChannel((channel) => {
      channel.onClosed(() => undefined);
      peer.channels.push(channel);
    });
    pc.onStateChange((state) => {
      if (state === 'connected') events.connected?.();
      if (state === 'failed' || state === 'closed') peer.goneOnce();
    });
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('ICE gathering timed out')), GATHER_TIMEOUT_MS);
        pc.onGatheringStateChange((state) => {
          if (state !== 'complete') return;
          clearTimeout(timer);
          const local = pc.localDescription();
          if (local === null) reject(new Error('no local description'));
          else resolve(local.sdp);
        });
        pc.setRemoteDescription(offerSdp, 'offer');
      });
      return { peer, answerSdp: pcmuOnlyAnswer(answer, peer.packetizer.ssrc) };
    } catch (err) {
      peer.close();
      throw err;
    }
  }

  /** Speech to the caller (PCM16LE 24 kHz; sent as 20 ms PCMU packets). Dropped until the media path is open. */
  send(pcm24k: Buffer): void {
    const track = this.track;
    if (this.closed || track === undefined || !track.isOpen()) return;
    try {
      for (const packet of this.packetizer.packets(pcm24kToPcmu(pcm24k))) {
        if (track.sendMessageBinary(packet)) this.packetsOut++;
      }
    } catch {
      // The caller hung up: the track closes on libdatachannel's own thread, so it can close after isOpen().
    }
  }

  /** A server event on the browser's data channel (the caller only reads it). */
  sendEvent(frame: string): void {
    const channel = this.channels[0];
    try {
      if (!this.closed && channel?.isOpen()) channel.sendMessage(frame);
    } catch {
      // Closed on libdatachannel's own thread between the check and the send: the caller is gone.
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Tracks and channels hold native callbacks that keep the process alive until each is closed itself.
    try {
      this.track?.close();
      for (const channel of this.channels) channel.close();
      this.pc.close();
    } catch {
      // already closed
    }
  }

  private goneOnce(): void {
    if (this.closed) return;
    this.close();
    this.events.gone();
  }
}
