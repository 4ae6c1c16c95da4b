import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { startVoiceSimulator } from './server.js';

/**
 * Standalone simulator: `npm run simulator -- --port 0 [--host 127.0.0.1] [--seed 1] [--faults spec] [--echo]
 * [--pcm fixture.raw]`. Prints its ws:// URL on the first stdout line (tools read it from there) and stops cleanly
 * on SIGINT/SIGTERM. Diagnostics go to stderr so stdout stays machine-readable.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      seed: { type: 'string', default: '1' },
      faults: { type: 'string' },
      echo: { type: 'boolean', default: false },
      pcm: { type: 'string' },
    },
    strict: true,
  });
  const port = Number(values.port);
  const seed = Number(values.seed);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be an integer 0..65535');
  if (!Number.isInteger(seed)) throw new Error('--seed must be an integer');
  const simulator = await startVoiceSimulator({
    port,
    host: values.host,
    seed,
    echo: values.echo,
    ...(values.faults === undefined ? {} : { defaultFaults: values.faults }),
    ...(values.pcm === undefined ? {} : { outputPcm: readFileSync(values.pcm) }),
  });
  process.stdout.write(`${simulator.url}\n`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`voice simulator: ${signal}, closing\n`);
    simulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`voice simulator failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
