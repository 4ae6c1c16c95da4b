#!/usr/bin/env node
/**
 * parley-test: runs an assistant's test scenarios on a Parley server for CI. Prints each verdict with its evidence,
 * writes JUnit XML (--junit), exits 0 when every scenario passed, 1 when any failed or errored, 2 on a usage or
 * connection error.
 */
import { writeFileSync } from 'node:fs';
import { parseParleyTestArgs, PARLEY_TEST_USAGE, type ParleyTestOptions } from './args.js';
import { junitXml } from './junit.js';
import { runScenarioTests, verdictLines } from './run.js';

async function main(argv: string[]): Promise<number> {
  let o: ParleyTestOptions | 'help';
  try {
    o = parseParleyTestArgs(argv, process.env);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${PARLEY_TEST_USAGE}\n`);
    return 2;
  }
  if (o === 'help') {
    process.stdout.write(`${PARLEY_TEST_USAGE}\n`);
    return 0;
  }
  const stop = new AbortController();
  process.on('SIGINT', () => stop.abort());
  let outcome;
  try {
    outcome = await runScenarioTests(o, {
      signal: stop.signal,
      onResult: (c) => process.stdout.write(`${verdictLines(c).join('\n')}\n`),
    });
  } catch (err) {
    process.stderr.write(`parley-test: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const passed = outcome.cases.filter((c) => c.status === 'passed').length;
  process.stdout.write(
    `\n${passed} of ${outcome.cases.length} scenarios passed (run ${outcome.runId}, ${outcome.status}, ${(outcome.durationMs / 1000).toFixed(1)} s)\n`,
  );
  if (o.junitPath !== undefined)
    writeFileSync(
      o.junitPath,
      junitXml({ name: `parley.${o.assistantId}`, durationMs: outcome.durationMs, cases: outcome.cases }),
    );
  if (o.json) process.stdout.write(`${JSON.stringify(outcome, null, 2)}\n`);
  return outcome.status === 'done' && passed === outcome.cases.length ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`parley-test failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
