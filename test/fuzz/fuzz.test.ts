import t from 'tap';
import { describeFailure, runFuzz, summarize } from './harness.js';
import { createWorld } from './world.js';

/**
 * A bounded, seeded sample of the fuzz suite (about 2,000 raw requests over every route and auth mode) runs
 * with `npm test`; `npm run fuzz -- --runs 20000` runs more. No 5xx, no hang, the server ready afterwards, the other
 * tenant's data unchanged. FUZZ_SEED picks another sample (the seed is printed either way).
 */
const BODY_READ_TIMEOUT_MS = 800;
const seed = process.env['FUZZ_SEED'] !== undefined ? Number(process.env['FUZZ_SEED']) : 20261124;
const runs = process.env['FUZZ_RUNS'] !== undefined ? Number(process.env['FUZZ_RUNS']) : 2000;

t.test(`fuzz: ${runs} requests from the route table (seed ${seed})`, async (t) => {
  const world = await createWorld(t, { BODY_READ_TIMEOUT_MS: String(BODY_READ_TIMEOUT_MS), LOG_LEVEL: 'silent' });
  const report = await runFuzz(world, { runs, seed, bodyReadTimeoutMs: BODY_READ_TIMEOUT_MS });
  t.comment(summarize(report));
  for (const f of report.failures.slice(0, 20)) t.comment(describeFailure(f));
  t.equal(report.runs, runs, 'every case ran');
  t.same(
    report.failures.map((f) => `${f.index}: ${f.label}: ${f.why}`),
    [],
    'no 5xx, no hang, no request left unanswered',
  );
  t.equal(report.readyAfter, 200, '/readyz answers 200 afterwards');
  t.ok(
    report.victimUnchanged,
    `the other tenant's data is unchanged${report.victimDiff ? `\n${report.victimDiff}` : ''}`,
  );
  t.ok(
    Object.keys(report.byStatus).some((s) => s.startsWith('2')),
    'some requests went all the way through (the sample is not all refusals)',
  );
});
