/**
 * The process: read config, create deps, build the app, listen, drain on SIGTERM.
 * The only file that listens or exits.
 */
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config/index.js';
import { createDeps } from './deps.js';
import { createLogger } from './log/index.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG: a supervisor should not restart-loop on a bad setting
    }
    throw err;
  }
  const log = createLogger({ level: config.LOG_LEVEL });
  if (config.secretKeySource === 'generated') {
    log.warn({ dataDir: config.DATA_DIR }, 'SECRET_KEY is unset: generated one under DATA_DIR; set SECRET_KEY for a fleet');
  }
  const started = Date.now();
  const deps = await createDeps(config, log);
  const app = buildApp(deps);
  const port = await app.listen(config.HOST, config.PORT);
  log.info({ host: config.HOST, port, instanceId: config.instanceId, startupMs: Date.now() - started }, 'parley listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, graceMs: config.SHUTDOWN_GRACE_MS }, 'draining');
    try {
      await app.close(config.SHUTDOWN_GRACE_MS);
      await deps.close();
      log.info('stopped');
      log.flush();
      process.exitCode = 0;
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      log.flush();
      process.exitCode = 1;
    }
    // Anything still holding the loop after a clean drain is a bug; do not hang the supervisor.
    setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref();
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`parley failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
