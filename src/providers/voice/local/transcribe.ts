import type { VoiceAudioFormat } from '../audio-format.js';
import { bytesOf, decodeFrame, RECOGNIZER_RATE, Resampler } from './audio.js';
import { loadPronunciations, type LocalVoiceEngines } from './engines.js';
import { prepareSessionModel, recognizeUtterance } from './recognizer.js';

/**
 * Recognizes stretches of a call's audio after the fact (a scenario run's simulated caller "listening" to each
 * answer), with one language model made from `hints` (the assistant's documents), one recognizer process per stretch,
 * in turn. Answers one text per stretch ('' when nothing was recognized).
 */
export async function transcribeCallAudio(
  engines: LocalVoiceEngines,
  hints: string,
  stretches: Buffer[],
  audio: VoiceAudioFormat,
  signal: AbortSignal,
): Promise<string[]> {
  if (stretches.length === 0) return [];
  const model = await prepareSessionModel(hints, await loadPronunciations(engines.dictionary));
  try {
    const texts: string[] = [];
    for (const raw of stretches) {
      const samples = new Resampler(audio.sampleRateHz, RECOGNIZER_RATE).push(decodeFrame(raw, audio));
      const words = await recognizeUtterance(bytesOf(samples), { engines, model, signal });
      texts.push(words.map((w) => w.word).join(' '));
    }
    return texts;
  } finally {
    await model.dispose();
  }
}
