import { open, rename, rm } from 'node:fs/promises';
import {
  bytesPerSample,
  DEFAULT_AUDIO_FORMAT,
  silenceByte,
  type VoiceAudioFormat,
} from '../../providers/voice/index.js';
import type { RelayTap } from '../pump/options.js';
import { TrackWriter } from './track.js';
import { wavHeader } from './wav.js';

/** Where one recording lives: the finished WAV, and the two raw tracks (and the half-built WAV) while it is made. */
export interface RecordingPaths {
  wav: string;
  caller: string;
  assistant: string;
  building: string;
}

const READ_BYTES = 32 * 1024;

/**
 * The recording of one call: the caller on the left channel, the assistant (as relayed through the gate) on the
 * right, both streamed to disk while the call runs, in the call's own format. When the call ends the two tracks are
 * interleaved into one two-channel WAV of that format (PCM16, or G.711 μ-law / A-law as heard), block by block
 * (bounded memory), written under a temporary name and renamed, so a WAV that exists is always complete. The raw
 * tracks are deleted afterwards.
 */
export class CallRecorder {
  readonly tap: RelayTap;
  private readonly callerTrack: TrackWriter;
  private readonly assistantTrack: TrackWriter;
  private finished: Promise<{ bytes: number } | null> | undefined;

  constructor(
    readonly sessionId: string,
    readonly paths: RecordingPaths,
    private readonly now: () => number,
    private readonly audio: VoiceAudioFormat = DEFAULT_AUDIO_FORMAT,
  ) {
    const startedAt = now();
    this.callerTrack = new TrackWriter(paths.caller, startedAt, undefined, undefined, audio);
    this.assistantTrack = new TrackWriter(paths.assistant, startedAt, undefined, undefined, audio);
    this.tap = {
      caller: (audio) => this.callerTrack.write(audio, this.now()),
      assistant: (audio) => this.assistantTrack.write(audio, this.now()),
    };
  }

  get droppedBytes(): number {
    return this.callerTrack.droppedBytes + this.assistantTrack.droppedBytes;
  }

  /** Close the tracks and delete them without building a WAV (the recording was stored some other way). */
  async discard(): Promise<void> {
    await Promise.allSettled([this.callerTrack.close(), this.assistantTrack.close()]);
    await Promise.all([rm(this.paths.caller, { force: true }), rm(this.paths.assistant, { force: true })]);
  }

  /** Close the tracks and build the WAV (once). Resolves with its size, or null when nothing could be written. */
  finish(): Promise<{ bytes: number } | null> {
    this.finished ??= this.build();
    return this.finished;
  }

  private async build(): Promise<{ bytes: number } | null> {
    try {
      await Promise.all([this.callerTrack.close(), this.assistantTrack.close()]);
      const bytes = await interleave(this.paths.caller, this.paths.assistant, this.paths.building, this.audio);
      await rename(this.paths.building, this.paths.wav);
      return { bytes };
    } finally {
      await Promise.all([
        rm(this.paths.caller, { force: true }),
        rm(this.paths.assistant, { force: true }),
        rm(this.paths.building, { force: true }),
      ]);
    }
  }
}

/** Two mono tracks -> one stereo WAV (left = `leftPath`). The shorter track is padded with silence. */
export async function interleave(
  leftPath: string,
  rightPath: string,
  outPath: string,
  audio: VoiceAudioFormat = DEFAULT_AUDIO_FORMAT,
): Promise<number> {
  const left = await open(leftPath, 'r');
  const right = await open(rightPath, 'r');
  const out = await open(outPath, 'w', 0o600);
  const sample = bytesPerSample(audio);
  const silence = silenceByte(audio);
  try {
    const whole = (bytes: number) => bytes - (bytes % sample);
    const leftBytes = whole((await left.stat()).size);
    const rightBytes = whole((await right.stat()).size);
    const total = Math.max(leftBytes, rightBytes);
    const dataBytes = total * 2;
    const header = wavHeader(dataBytes, 2, audio);
    await out.write(header, 0, header.length, 0);
    const block = READ_BYTES - (READ_BYTES % sample);
    const l = Buffer.alloc(block);
    const r = Buffer.alloc(block);
    const o = Buffer.alloc(block * 2);
    let position = 0;
    let outPosition = header.length;
    while (position < total) {
      const want = Math.min(block, total - position);
      const gotL =
        position < leftBytes ? (await left.read(l, 0, Math.min(want, leftBytes - position), position)).bytesRead : 0;
      const gotR =
        position < rightBytes ? (await right.read(r, 0, Math.min(want, rightBytes - position), position)).bytesRead : 0;
      if (gotL < want) l.fill(silence, gotL, want);
      if (gotR < want) r.fill(silence, gotR, want);
      if (sample === 2) {
        for (let i = 0, j = 0; i < want; i += 2, j += 4) {
          o[j] = l[i]!;
          o[j + 1] = l[i + 1]!;
          o[j + 2] = r[i]!;
          o[j + 3] = r[i + 1]!;
        }
      } else {
        for (let i = 0, j = 0; i < want; i++, j += 2) {
          o[j] = l[i]!;
          o[j + 1] = r[i]!;
        }
      }
      await out.write(o, 0, want * 2, outPosition);
      outPosition += want * 2;
      position += want;
    }
    await out.sync();
    return header.length + dataBytes;
  } finally {
    await Promise.all([left.close(), right.close(), out.close()]);
  }
}
