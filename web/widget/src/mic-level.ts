/**
 * The microphone's level for the widget's level bar: the RMS of one 20 ms frame on a 0-1 scale, logarithmic like
 * loudness (-60 dBFS, a quiet room, is 0; -10 dBFS, loud speech, is 1).
 */
export function micLevel(pcm: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!;
  const rms = Math.sqrt(sum / Math.max(1, pcm.length)) / 32768;
  const db = 20 * Math.log10(Math.max(rms, 1e-6));
  return Math.max(0, Math.min(1, (db + 60) / 50));
}
