/**
 * `npm run fuzz -- --runs 20000 [--seed N] [--only INDEX] [--concurrency C]`: the fuzz suite at any size, outside tap.
 * Prints the seed first and every failure as a reproducible case (regenerate command and raw bytes); exits 1 on any
 * failure. Starts its own database, Redis prefix and app, and removes them at the end.
 */
import { parseArgs } from 'node:util';
import type { Test } from 'tap';
import { describeFailure, runFuzz, summarize } from './harness.js';
import { createWorld } from './world.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20000' },
    seed: { type: 'string' },
    only: { type: 'string' },
    concurrency: { type: 'string', default: '8' },
  },
});
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const runs = Number(values.runs);
const BODY_READ_TIMEOUT_MS = 800;
console.log(`fuzz: seed ${seed}, ${values.only !== undefined ? `case ${values.only} only` : `${runs} runs`}`);

const teardowns: Array<() => unknown> = [];
const shim = { teardown: (fn: () => unknown) => void teardowns.push(fn) } as unknown as Test;
let failed = true;
try {
  const world = await createWorld(shim, { BODY_READ_TIMEOUT_MS: String(BODY_READ_TIMEOUT_MS), LOG_LEVEL: 'silent' });
  const report = await runFuzz(world, {
    runs,
    seed,
    bodyReadTimeoutMs: BODY_READ_TIMEOUT_MS,
    concurrency: Number(values.concurrency),
    ...(values.only !== undefined ? { only: Number(values.only) } : {}),
    onProgress: (done) => {
      if (done % 1000 === 0) console.log(`  ${done} done`);
    },
  });
  console.log(summarize(report));
  for (const f of report.failures) console.log(describeFailure(f));
  if (!report.victimUnchanged) console.log(`victim data changed:\n${report.victimDiff}`);
  failed = report.failures.length > 0 || report.readyAfter !== 200 || !report.victimUnchanged;
} finally {
  for (const fn of teardowns.reverse()) await fn();
}
process.exit(failed ? 1 : 0);
