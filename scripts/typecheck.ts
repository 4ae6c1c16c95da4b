/**
 * `npm run typecheck`: the five TypeScript projects checked side by side, as many at once as the machine has cores,
 * instead of one after another. Each project stays its own program because each is checked against other types:
 *
 * - tsconfig.json: the server, tests, scripts and benches (Node's types, no DOM);
 * - sdk/tsconfig.json: the SDK's browser-safe part (DOM, no Node: a `node:` import or `Buffer` there fails here);
 * - sdk/tsconfig.build.json: the whole SDK with its Node-only CLI, as `npm run build:sdk` compiles it;
 * - web/dashboard and web/widget: browser code (DOM, bundler resolution, the dashboard's JSX).
 *
 * Every pass is incremental (`.tsbuildinfo` files under dist/.typecheck/): a second run on an unchanged tree takes
 * seconds; a fresh clone checks everything. Output of each project is printed whole, in the order above.
 * Exit status: 0 when every project is clean, 1 otherwise.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const cacheDir = join(root, 'dist', '.typecheck');

/** The projects, and the name of each one's incremental state file. */
export const TYPECHECK_PROJECTS: ReadonlyArray<{ project: string; cache: string }> = [
  { project: 'tsconfig.json', cache: 'root' },
  { project: 'sdk/tsconfig.json', cache: 'sdk-browser' },
  { project: 'sdk/tsconfig.build.json', cache: 'sdk-build' },
  { project: 'web/dashboard/tsconfig.json', cache: 'dashboard' },
  { project: 'web/widget/tsconfig.json', cache: 'widget' },
];

interface Result {
  project: string;
  code: number;
  output: string;
  ms: number;
}

function check(project: string, cache: string): Promise<Result> {
  const started = Date.now();
  const args = [
    tsc,
    '-p',
    project,
    '--noEmit',
    '--incremental',
    '--tsBuildInfoFile',
    join(cacheDir, `${cache}.tsbuildinfo`),
    '--pretty',
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ project, code: code ?? 1, output, ms: Date.now() - started }));
    child.on('error', (err) => resolve({ project, code: 1, output: String(err), ms: Date.now() - started }));
  });
}

/** Runs every project, at most `jobs` at a time; results in {@link TYPECHECK_PROJECTS} order. */
export async function typecheckAll(jobs = availableParallelism()): Promise<Result[]> {
  mkdirSync(cacheDir, { recursive: true });
  const results: Result[] = new Array<Result>(TYPECHECK_PROJECTS.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < TYPECHECK_PROJECTS.length) {
      const index = next++;
      const { project, cache } = TYPECHECK_PROJECTS[index]!;
      results[index] = await check(project, cache);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, TYPECHECK_PROJECTS.length)) }, worker));
  return results;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const results = await typecheckAll();
  let failed = 0;
  for (const result of results) {
    if (result.output.trim() !== '')
      process.stdout.write(result.output.endsWith('\n') ? result.output : `${result.output}\n`);
    if (result.code !== 0) failed++;
    console.log(`typecheck ${result.project}: ${result.code === 0 ? 'ok' : 'FAILED'} (${result.ms} ms)`);
  }
  console.log(`typecheck: ${results.length - failed}/${results.length} projects clean in ${Date.now() - started} ms`);
  process.exitCode = failed === 0 ? 0 : 1;
}
