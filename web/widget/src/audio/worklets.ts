/// <reference path="./worklet-globals.d.ts" />
/**
 * The widget's two AudioWorklet processors, built into /widget/v1/parley-audio.js.
 *
 * - parley-capture: microphone (the context's rate, usually 48 kHz) -> 24 kHz PCM16 frames of 20 ms. Each output
 *   sample is the mean of the input samples it covers (a box filter: enough anti-aliasing for speech at 2:1).
 * - parley-playback: 24 kHz PCM16 assistant audio -> the context's rate by linear interpolation, through a small
 *   jitter buffer: playback starts once 60 ms are queued (or the stream paused with less), an underrun plays silence
 *   and re-buffers, more than 4 s queued drops the oldest. `flush` empties it at once (the gate closed).
 */
import { CAPTURE_PROCESSOR, FRAME_SAMPLES, MEDIA_RATE, PLAYBACK_PROCESSOR, type PlaybackCommand } from './protocol.js';

class CaptureProcessor extends AudioWorkletProcessor {
  private readonly step = sampleRate / MEDIA_RATE;
  private frame = new Int16Array(FRAME_SAMPLES);
  private filled = 0;
  private sum = 0;
  private count = 0;
  private position = 0;

  process(inputs: Float32Array[][]): boolean {
    const input = inputs[0]?.[0];
    if (input === undefined) return true;
    for (let i = 0; i < input.length; i++) {
      this.sum += input[i]!;
      this.count++;
      this.position += 1;
      if (this.position < this.step) continue;
      this.position -= this.step;
      const value = Math.max(-1, Math.min(1, this.sum / this.count));
      this.sum = 0;
      this.count = 0;
      this.frame[this.filled++] = value < 0 ? value * 0x8000 : value * 0x7fff;
      if (this.filled === FRAME_SAMPLES) {
        this.port.postMessage({ type: 'frame', pcm: this.frame }, [this.frame.buffer]);
        this.frame = new Int16Array(FRAME_SAMPLES);
        this.filled = 0;
      }
    }
    return true;
  }
}

const START_SAMPLES = (MEDIA_RATE * 60) / 1000;
const MAX_SAMPLES = MEDIA_RATE * 4;
const IDLE_START_QUANTA = 40; // ~100 ms of render quanta without new audio: play what is queued

class PlaybackProcessor extends AudioWorkletProcessor {
  private ring = new Float32Array(MAX_SAMPLES);
  private head = 0; // read index (integer part)
  private fraction = 0;
  private size = 0;
  private playing = false;
  private quantaSincePush = 0;
  private readonly step = MEDIA_RATE / sampleRate;
  private sumSquares = 0;
  private samplesOut = 0;
  private quanta = 0;
  private underruns = 0;

  constructor() {
    super();
    this.port.onmessage = (event: MessageEvent<PlaybackCommand>) => {
      const command = event.data;
      if (command.type === 'flush') {
        this.size = 0;
        this.fraction = 0;
        this.playing = false;
        return;
      }
      this.push(new Int16Array(command.pcm, 0, command.pcm.byteLength >> 1));
    };
  }

  private push(pcm: Int16Array): void {
    this.quantaSincePush = 0;
    for (let i = 0; i < pcm.length; i++) {
      if (this.size === MAX_SAMPLES) {
        this.head = (this.head + 1) % MAX_SAMPLES; // drop the oldest
        this.size--;
      }
      this.ring[(this.head + this.size) % MAX_SAMPLES] = pcm[i]! / 0x8000;
      this.size++;
    }
  }

  process(_inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const out = outputs[0]?.[0];
    if (out === undefined) return true;
    this.quantaSincePush++;
    if (!this.playing && this.size > 1 && (this.size >= START_SAMPLES || this.quantaSincePush >= IDLE_START_QUANTA))
      this.playing = true;
    for (let i = 0; i < out.length; i++) {
      if (!this.playing || this.size < 2) {
        if (this.playing) {
          this.playing = false;
          this.underruns++;
          // Whatever single sample is left is played out on the next start.
        }
        out[i] = 0;
        continue;
      }
      const a = this.ring[this.head]!;
      const b = this.ring[(this.head + 1) % MAX_SAMPLES]!;
      const value = a + (b - a) * this.fraction;
      out[i] = value;
      this.sumSquares += value * value;
      this.fraction += this.step;
      while (this.fraction >= 1) {
        this.fraction -= 1;
        this.head = (this.head + 1) % MAX_SAMPLES;
        this.size--;
      }
    }
    for (let c = 1; c < (outputs[0]?.length ?? 0); c++) outputs[0]![c]!.set(out);
    this.samplesOut += out.length;
    if (++this.quanta % 38 === 0) {
      const rms = Math.sqrt(this.sumSquares / Math.max(1, this.samplesOut));
      this.port.postMessage({
        type: 'level',
        rms,
        bufferedMs: (this.size * 1000) / MEDIA_RATE,
        underruns: this.underruns,
      });
      this.sumSquares = 0;
      this.samplesOut = 0;
    }
    return true;
  }
}

registerProcessor(CAPTURE_PROCESSOR, CaptureProcessor);
registerProcessor(PLAYBACK_PROCESSOR, PlaybackProcessor);
