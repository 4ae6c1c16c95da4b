import type { RealtimeSocket } from '../../../http/index.js';
import type { VoiceClock } from '../../../providers/voice/index.js';
import type { RelayLink } from '../../pump/link.js';
import { MediaPump, type PumpPhase } from '../../pump/media-pump.js';
import type { RelayOptions, RelayStats, RelayTap } from '../../pump/options.js';
import { parleyVoiceCodec, readCallerText } from './codec.js';

/**
 * The media relay of one `parley.voice.v1` WebSocket: the shared {@link MediaPump} with this transport's wire codec
 * in front of it. Caller binary frames are audio in the call's format (the pump checks their size); caller text
 * frames other than `{"type":"mute"}` / `{"type":"unmute"}` are dropped and counted, so nothing the caller sends
 * reaches the provider as a control event. What the pump reports leaves as the protocol's JSON events
 * (docs/voice-protocol.md). Presence: the socket opening attaches the caller, its close detaches it.
 */
export type RelayPhase = PumpPhase;

/** Close codes the relay uses besides 1000 (ended). */
export const RELAY_CLOSE = { ended: 1000, replaced: 4001 } as const;

export class MediaRelay {
  private readonly pump: MediaPump;

  constructor(
    readonly socket: RealtimeSocket<unknown>,
    readonly link: RelayLink,
    clock: Pick<VoiceClock, 'now'>,
    options: Partial<RelayOptions> = {},
    tap?: RelayTap,
  ) {
    const codec = parleyVoiceCodec(socket, () => this.pump.stats.eventsDropped++);
    this.pump = new MediaPump(
      { sendAudio: (audio) => socket.send(audio, true), bufferedAmount: () => socket.bufferedAmount() },
      link,
      {
        ...codec,
        ended: (endReason) => {
          codec.ended(endReason);
          socket.end(RELAY_CLOSE.ended, 'ended');
        },
      },
      clock,
      options,
      tap,
    );
  }

  get stats(): RelayStats {
    return this.pump.stats;
  }

  get state(): RelayPhase {
    return this.pump.state;
  }

  /** Bytes of assistant audio waiting in the ring. */
  get pendingBytes(): number {
    return this.pump.pendingBytes;
  }

  /** Start relaying: the caller is here (presence), and the first state goes out. */
  start(): void {
    this.pump.start();
  }

  /** A caller message. `data` is valid only during this call (uWS): it is consumed synchronously. */
  onMessage(data: ArrayBuffer, binary: boolean): void {
    if (this.pump.state !== 'open') return;
    if (binary) {
      this.pump.callerAudio(Buffer.from(data, 0, data.byteLength));
      return;
    }
    const command = readCallerText(data, this.pump.options.maxTextFrameBytes);
    if (command === undefined) this.pump.callerFrameDropped();
    else this.pump.setMuted(command === 'mute');
  }

  /** The caller's socket drained some of its backlog. */
  onDrain(): void {
    this.pump.onDrain();
  }

  /** A newer media socket for the same session took over: leave without telling the session we are gone. */
  replace(): void {
    if (!this.pump.replace()) return;
    if (this.socket.send(JSON.stringify({ type: 'state', notice: 'replaced' }), false) === 'dropped')
      this.pump.stats.eventsDropped++;
    this.socket.end(RELAY_CLOSE.replaced, 'replaced by a newer connection');
  }

  /** The caller's socket closed (any reason): the caller is gone unless it was replaced or the call ended. */
  onClose(): void {
    this.pump.onClose();
  }
}
