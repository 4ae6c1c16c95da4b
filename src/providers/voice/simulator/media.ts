/** Deterministic stand-ins for speech: seeded words and a tone. */

const WORDS = [
  'hello',
  'there',
  'could',
  'you',
  'tell',
  'me',
  'about',
  'the',
  'opening',
  'hours',
  'today',
  'please',
  'I',
  'would',
  'like',
  'to',
  'book',
  'a',
  'table',
  'for',
  'two',
  'people',
  'tonight',
  'at',
  'seven',
  'thanks',
  'sure',
  'let',
  'check',
  'that',
  'one',
  'moment',
  'yes',
  'we',
  'have',
  'space',
  'is',
  'there',
  'parking',
  'nearby',
  'great',
  'what',
  'else',
  'can',
  'help',
  'with',
  'price',
  'menu',
  'delivery',
  'order',
  'status',
  'account',
  'refund',
];

/** mulberry32: tiny, fast and stable across Node versions, so a seed always yields the same transcript. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An endless deterministic word stream for one seed. */
export function wordStream(seed: number): () => string {
  const random = seededRandom(seed);
  return () => WORDS[Math.floor(random() * WORDS.length)]!;
}

/** The first `count` words a session with this seed will transcribe (for tests that predict transcripts). */
export function simulatedWords(seed: number, count: number): string[] {
  const next = wordStream(seed);
  return Array.from({ length: count }, next);
}

export const SAMPLE_RATE = 24_000;
export const BYTES_PER_MS = (SAMPLE_RATE * 2) / 1000;
export const FRAME_BYTES = 20 * BYTES_PER_MS;

/** One second of a 440 Hz sine (an integral number of cycles, so looping it is seamless). */
export function toneSecond(frequency = 440, amplitude = 6000): Buffer {
  const pcm = Buffer.alloc(SAMPLE_RATE * 2);
  for (let i = 0; i < SAMPLE_RATE; i++) {
    pcm.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / SAMPLE_RATE)), i * 2);
  }
  return pcm;
}

export { peakLevel } from './audio.js';
