/**
 * Builds the widget with esbuild into dist/widget/: parley.js (the element, one minified IIFE) and parley-audio.js
 * (the AudioWorklet processors, an ES module). parley.js names the worklet file with its content hash, so the
 * worklet can be cached for good. `npm run build:widget` runs this; the server serves the two files
 * (src/web-assets). Writes are atomic (temp file + rename): tests and the server may read while it builds.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
export const WIDGET_OUT_DIR = join(here, '..', '..', 'dist', 'widget');
export const WIDGET_FILES = ['parley.js', 'parley-audio.js'] as const;

export interface BuiltFile {
  name: string;
  bytes: number;
  gzipBytes: number;
}

async function bundle(entry: string, format: 'iife' | 'esm', define: Record<string, string> = {}): Promise<Buffer> {
  const result = await build({
    entryPoints: [join(here, 'src', entry)],
    bundle: true,
    minify: true,
    format,
    target: ['es2020', 'chrome90', 'firefox90', 'safari15'],
    write: false,
    legalComments: 'none',
    define,
    logLevel: 'silent',
  });
  return Buffer.from(result.outputFiles[0]!.contents);
}

function writeAtomic(path: string, bytes: Buffer): void {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, path);
}

/** Builds both files into `outDir` (default dist/widget) and reports their sizes. */
export async function buildWidget(outDir = WIDGET_OUT_DIR): Promise<BuiltFile[]> {
  const audio = await bundle('audio/worklets.ts', 'esm');
  const version = createHash('sha256').update(audio).digest('hex').slice(0, 16);
  const main = await bundle('main.ts', 'iife', { __PARLEY_AUDIO_VERSION__: JSON.stringify(version) });
  mkdirSync(outDir, { recursive: true });
  const files: Array<[string, Buffer]> = [
    ['parley-audio.js', audio],
    ['parley.js', main],
  ];
  for (const [name, bytes] of files) writeAtomic(join(outDir, name), bytes);
  return files.map(([name, bytes]) => ({ name, bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length }));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = await buildWidget();
  for (const f of files) console.log(`dist/widget/${f.name}: ${f.bytes} bytes, ${f.gzipBytes} gzipped`);
}
