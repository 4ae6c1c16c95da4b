import { accessSync, constants, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/**
 * The offline engines the local provider runs as child processes (Debian packages: `pocketsphinx`,
 * `pocketsphinx-en-us`, `espeak-ng`). Found on PATH at start-up; nothing is downloaded.
 */
export interface LocalVoiceEngines {
  /** pocketsphinx_continuous: recognition of one utterance read from stdin. */
  recognizer: string;
  /** espeak-ng: synthesis to a WAV on stdout. */
  synthesizer: string;
  /** Acoustic model directory (en-us). */
  acousticModel: string;
  /** Pronunciation dictionary (cmudict). */
  dictionary: string;
}

export const DEFAULT_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The engines, or the list of what is missing (for the start-up line and the readiness note). `path` is the
 * process's PATH, handed in by the config layer.
 */
export function findLocalVoiceEngines(
  path: string,
  modelDir = DEFAULT_MODEL_DIR,
): { engines: LocalVoiceEngines; missing: [] } | { engines: undefined; missing: string[] } {
  const recognizer = onPath('pocketsphinx_continuous', path);
  const synthesizer = onPath('espeak-ng', path);
  const acousticModel = join(modelDir, 'en-us');
  const dictionary = join(modelDir, 'cmudict-en-us.dict');
  const missing: string[] = [];
  if (recognizer === undefined) missing.push('pocketsphinx');
  if (!existsSync(acousticModel) || !existsSync(dictionary)) missing.push('pocketsphinx-en-us');
  if (synthesizer === undefined) missing.push('espeak-ng');
  if (recognizer === undefined || synthesizer === undefined || missing.length > 0)
    return { engines: undefined, missing };
  return { engines: { recognizer, synthesizer, acousticModel, dictionary }, missing: [] };
}

/** The pronunciation dictionary: each word's lines (alternates included), loaded once per file. */
export interface Pronunciations {
  has(word: string): boolean;
  /** Dictionary lines for these words (the words the recognizer may say), for a small per-session dictionary. */
  linesFor(words: Iterable<string>): string;
}

const loaded = new Map<string, Promise<Pronunciations>>();

export function loadPronunciations(file: string): Promise<Pronunciations> {
  let pending = loaded.get(file);
  if (pending === undefined) {
    pending = readFile(file, 'utf8').then((text) => {
      const lines = new Map<string, string[]>();
      for (const line of text.split('\n')) {
        const space = line.indexOf(' ');
        if (space <= 0) continue;
        const word = line.slice(0, space).replace(/\(\d+\)$/, '');
        const list = lines.get(word);
        if (list === undefined) lines.set(word, [line]);
        else list.push(line);
      }
      return {
        has: (word: string) => lines.has(word),
        linesFor(words: Iterable<string>): string {
          const out: string[] = [];
          for (const w of words) out.push(...(lines.get(w) ?? []));
          return `${out.join('\n')}\n`;
        },
      };
    });
    pending.catch(() => loaded.delete(file));
    loaded.set(file, pending);
  }
  return pending;
}
