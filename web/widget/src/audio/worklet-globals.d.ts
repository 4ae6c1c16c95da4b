/** The AudioWorkletGlobalScope names the DOM library does not declare (Web Audio API, AudioWorklet). */
declare const sampleRate: number;
declare const currentTime: number;
declare abstract class AudioWorkletProcessor {
  readonly port: MessagePort;
  constructor();
  abstract process(
    inputs: Float32Array[][],
    outputs: Float32Array[][],
    parameters: Record<string, Float32Array>,
  ): boolean;
}
declare function registerProcessor(name: string, ctor: new () => AudioWorkletProcessor): void;
