import { open, rename, rm } from 'node:fs/promises';
import type { RelayTap } from '../pump/options.js';
import { TrackWriter } from './track.js';
import { wavHeader, WAV_HEADER_BYTES } from './wav.js';

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
 * right, both streamed to disk while the call runs. When the call ends the two tracks are interleaved into one
 * two-channel 24 kHz PCM16 WAV, block by block (bounded memory), written under a temporary name and renamed, so
 * a WAV that exists is always complete. The raw tracks are deleted afterwards.
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
  ) {
    const startedAt = now();
    this.callerTrack = new TrackWriter(paths.caller, startedAt);
    this.assistantTrack = new TrackWriter(paths.assistant, startedAt);
    this.tap = {
      caller: (pcm) => this.callerTrack.write(pcm, this.now()),
      assistant: (pcm) => this.assistantTrack.write(pcm, this.now()),
    };
  }

  get droppedBytes(): number {
    return this.callerTrack.droppedBytes + this.assistantTrack.droppedBytes;
  }

  /** Close the tracks and build the WAV (once). Resolves with its size, or null when nothing could be written. */
  finish(): Promise<{ bytes: number } | null> {
    this.finished ??= this.build();
    return this.finished;
  }

  private async build(): Promise<{ bytes: number } | null> {
    try {
      await Promise.all([this.callerTrack.close(), this.assistantTrack.close()]);
      const bytes = await interleave(this.paths.caller, this.paths.assistant, this.paths.building);
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

/** Two mono PCM16 files -> one stereo WAV (left = `leftPath`). The shorter track is padded with silence. */
export async function interleave(leftPath: string, rightPath: string, outPath: string): Promise<number> {
  const left = await open(leftPath, 'r');
  const right = await open(rightPath, 'r');
  const out = await open(outPath, 'w', 0o600);
  try {
    const leftBytes = (await left.stat()).size & ~1;
    const rightBytes = (await right.stat()).size & ~1;
    const frames = Math.max(leftBytes, rightBytes) / 2;
    const dataBytes = frames * 4;
    await out.write(wavHeader(dataBytes, 2), 0, WAV_HEADER_BYTES, 0);
    const l = Buffer.alloc(READ_BYTES);
    const r = Buffer.alloc(READ_BYTES);
    const o = Buffer.alloc(READ_BYTES * 2);
    let position = 0;
    let outPosition = WAV_HEADER_BYTES;
    const total = frames * 2;
    while (position < total) {
      const want = Math.min(READ_BYTES, total - position);
      const gotL =
        position < leftBytes ? (await left.read(l, 0, Math.min(want, leftBytes - position), position)).bytesRead : 0;
      const gotR =
        position < rightBytes ? (await right.read(r, 0, Math.min(want, rightBytes - position), position)).bytesRead : 0;
      if (gotL < want) l.fill(0, gotL, want);
      if (gotR < want) r.fill(0, gotR, want);
      for (let i = 0, j = 0; i < want; i += 2, j += 4) {
        o[j] = l[i]!;
        o[j + 1] = l[i + 1]!;
        o[j + 2] = r[i]!;
        o[j + 3] = r[i + 1]!;
      }
      await out.write(o, 0, want * 2, outPosition);
      outPosition += want * 2;
      position += want;
    }
    await out.sync();
    return WAV_HEADER_BYTES + dataBytes;
  } finally {
    await Promise.all([left.close(), right.close(), out.close()]);
  }
}
