/**
 * What the browser tests read from a widget that has a `data-test` attribute (never present otherwise):
 * `element.parleyTest`. A timeline of gate changes, captions (with the gate state when each was shown) and voice
 * states, and the loudest RMS measured by an AnalyserNode between the playback worklet and the AudioContext
 * destination, i.e. what the visitor hears.
 */
export class TestHook {
  readonly timeline: Array<{ kind: 'gate' | 'caption' | 'state'; value: string }> = [];
  /** Loudest RMS heard at the destination so far (0..1), and how many 50 ms samples were above 0.01. */
  maxOutputRms = 0;
  audibleSamples = 0;
  calls = 0;
  session: { sessionId: string; controlToken: string } | undefined;

  record(kind: 'gate' | 'caption' | 'state', value: string): void {
    this.timeline.push({ kind, value });
  }

  sample(rms: number | undefined): void {
    if (rms === undefined) return;
    if (rms > this.maxOutputRms) this.maxOutputRms = rms;
    if (rms > 0.01) this.audibleSamples++;
  }
}
