import type { GateDecision } from './types.js';

/**
 * The playback gate as a client follows it on both channels (NDJSON stream: the contract, with reasons; media `state`
 * events: ordered with the audio). The decision with the higher seq wins.
 */
export class GateView {
  seq = -1;
  open = false;
  reason: GateDecision['reason'] = 'start';
  /** Assistant audio was heard since the gate last opened. */
  audioSinceOpened = false;

  /** Applies a decision unless an newer one was seen. */
  decide(seq: number, open: boolean, reason: GateDecision['reason'] | undefined): void {
    if (seq < this.seq) return;
    if (open && (!this.open || seq > this.seq)) this.audioSinceOpened = false;
    this.seq = seq;
    this.open = open;
    if (reason !== undefined) this.reason = reason;
  }

  /** What a connected call that is not speaking shows: waiting for an answer, or listening to the caller. */
  idleState(): 'listening' | 'thinking' {
    if (this.open) return this.audioSinceOpened ? 'listening' : 'thinking';
    return this.reason === 'pending_backend' ? 'thinking' : 'listening';
  }
}
