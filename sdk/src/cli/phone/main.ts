#!/usr/bin/env node
/**
 * phone-sim: places simulated phone calls to a number registered in Parley, as the carrier would, and reports what
 * the callers lived through. `npm run phone-sim -- --help` in the repository.
 *
 * Output: progress on stderr; the summary (or with --json the report) on stdout. Exit code 0 when every call was
 * answered with a stream; 1 otherwise (or on a usage error); 130 after Ctrl-C (the report is still printed).
 */
import { parsePhoneSimArgs, phoneInput, PHONE_SIM_USAGE, type CliOptions } from './args.js';
import { runPhoneCalls } from './run.js';
import { runCarrierCommand } from './carrier-command.js';
import { phoneSummaryText } from './summary.js';

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'carrier') {
    const stop = new AbortController();
    process.on('SIGINT', () => stop.abort());
    process.on('SIGTERM', () => stop.abort());
    const stdout = (s: string) => new Promise<void>((resolve) => process.stdout.write(s, () => resolve()));
    const stderr = (s: string) => void process.stderr.write(s);
    return runCarrierCommand(argv.slice(1), process.env, { stdout, stderr }, stop.signal);
  }
  let o: CliOptions | 'help';
  let input: { mulaw: Uint8Array; label: string };
  try {
    o = parsePhoneSimArgs(argv, process.env);
    if (o === 'help') {
      process.stdout.write(`${PHONE_SIM_USAGE}\n`);
      return 0;
    }
    input = await phoneInput(o.inputPath);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${PHONE_SIM_USAGE}\n`);
    return 1;
  }
  const stop = new AbortController();
  process.on('SIGINT', () => stop.abort());
  process.on('SIGTERM', () => stop.abort());
  process.stderr.write(
    `phone-sim: ${o.calls} call${o.calls === 1 ? '' : 's'} to ${o.number} at ${o.url}, ${(o.durationMs / 1000).toFixed(0)} s each, saying ${input.label}\n`,
  );
  const report = await runPhoneCalls(o, input.mulaw, {
    signal: stop.signal,
    inputLabel: input.label,
    onProgress: (p) =>
      process.stderr.write(
        `${(p.elapsedMs / 1000).toFixed(0).padStart(4)} s  on the line ${p.active}  answered ${p.streamed}  failed ${p.failed}\n`,
      ),
  });
  await new Promise<void>((r) =>
    process.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : `${phoneSummaryText(report)}\n`, () => r()),
  );
  if (report.interrupted) return 130;
  return report.summary.streamed === report.summary.attempted ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`phone-sim failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
