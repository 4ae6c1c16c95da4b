import type { Test } from 'tap';
import {
  createVoiceProvider,
  startVoiceSimulator,
  type SimulatorProviderOptions,
  type VoiceLinkState,
  type VoiceProvider,
  type VoiceProviderError,
  type VoiceSessionClosed,
  type VoiceSessionHandlers,
  type VoiceSimulator,
  type VoiceSimulatorOptions,
  type VoiceTranscriptDelta,
  type VoiceUsage,
  type VoiceDelegationRequest,
} from '../../../src/providers/voice/index.js';
import { sleep, waitFor } from '../../helpers/wait.js';

export { sleep, waitFor };

/** Simulator timings that keep tests fast but still exercise every path. */
export const FAST_SIM: VoiceSimulatorOptions = {
  usageIntervalMs: 25,
  transcriptChunkMs: 100,
  wordMs: 40,
  outputFrameIntervalMs: 2,
  resumeWindowMs: 2000,
};

/** Adapter timings to match (the 3 s default is proven separately with a manual clock). */
export const FAST_ADAPTER = {
  lockTimeoutMs: 500,
  closeTimeoutMs: 300,
  reconnectWindowMs: 2000,
  reconnectInitialDelayMs: 10,
  reconnectMaxDelayMs: 50,
  keepaliveMs: 0,
  // One append per caller frame: the contract counts the frames the simulator received and the simulator cuts its
  // transcripts at append boundaries. Gathering frames behind a write in flight has its own tests
  // (append-coalescing.test.ts).
  appendMs: 0,
} as const;

export async function startSim(t: Test, options: VoiceSimulatorOptions = {}): Promise<VoiceSimulator> {
  const sim = await startVoiceSimulator({ ...FAST_SIM, ...options });
  t.teardown(() => sim.close());
  return sim;
}

export function simProvider(sim: VoiceSimulator, options: Partial<SimulatorProviderOptions> = {}): VoiceProvider {
  return createVoiceProvider({ kind: 'simulator', url: sim.url, ...FAST_ADAPTER, ...options });
}

/** PCM16LE frame of a loud 440 Hz tone (the simulator hears speech). */
export function voicedFrame(ms = 20): Buffer {
  const samples = ms * 24;
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++)
    pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24000)), i * 2);
  return pcm;
}

export const silentFrame = (ms = 20): Buffer => Buffer.alloc(ms * 48);

/** A 20 ms frame carrying a sequence number in its first 4 bytes (echo tests check order and duplicates). */
export function seqFrame(seq: number): Buffer {
  const pcm = Buffer.alloc(960);
  pcm.writeUInt32LE(seq, 0);
  return pcm;
}

/** Everything a session reported, in order. */
export class Recorder implements VoiceSessionHandlers {
  audio: Buffer[] = [];
  input: VoiceTranscriptDelta[] = [];
  output: VoiceTranscriptDelta[] = [];
  delegations: VoiceDelegationRequest[] = [];
  usage: number[] = [];
  states: VoiceLinkState[] = [];
  errors: VoiceProviderError[] = [];
  closed: VoiceSessionClosed[] = [];

  onOutputAudio = (pcm: Buffer): void => void this.audio.push(pcm);
  onInputTranscript = (d: VoiceTranscriptDelta): void => void this.input.push(d);
  onOutputTranscript = (d: VoiceTranscriptDelta): void => void this.output.push(d);
  onDelegation = (r: VoiceDelegationRequest): void => void this.delegations.push(r);
  onUsage = (u: VoiceUsage): void => void this.usage.push(u.seconds);
  onStateChange = (s: VoiceLinkState): void => void this.states.push(s);
  onError = (e: VoiceProviderError): void => void this.errors.push(e);
  onClosed = (c: VoiceSessionClosed): void => void this.closed.push(c);

  get audioBytes(): number {
    return this.audio.reduce((n, b) => n + b.length, 0);
  }

  get seqs(): number[] {
    return this.audio.map((b) => b.readUInt32LE(0));
  }
}

/** Send `frames` copies of a frame, `perTick` at a time, every `tickMs` (faster than real time, same audio). */
export async function pump(
  send: (pcm: Buffer) => boolean,
  frame: Buffer,
  frames: number,
  perTick = 10,
  tickMs = 2,
): Promise<number> {
  let accepted = 0;
  for (let i = 0; i < frames; i++) {
    if (send(frame)) accepted++;
    if ((i + 1) % perTick === 0) await sleep(tickMs);
  }
  return accepted;
}
