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
    log.warn(
      { dataDir: config.DATA_DIR },
      'SECRET_KEY is unset: generated one under DATA_DIR; set SECRET_KEY for a fleet',
    );
  }
  const started = Date.now();
  const deps = await createDeps(config, log);
  const app = buildApp(deps);
  const port = await app.listen(config.HOST, config.PORT);
  log.info(
    { host: config.HOST, port, instanceId: config.instanceId, startupMs: Date.now() - started },
    'parley listening',
  );

  let stopping = false;
  let hurry: () => void = () => undefined;
  const hurried = new Promise<void>((resolve) => (hurry = resolve));
  const stop = async (signal: string) => {
    if (stopping) {
      // A second signal: stop waiting for live calls; they end with `shutdown` now.
      log.warn({ signal }, 'second signal: ending the remaining voice calls now');
      hurry();
      return;
    }
    stopping = true;
    const drainMs = config.VOICE_DRAIN_TIMEOUT_SECONDS * 1000;
    log.info(
      { signal, voiceDrainMs: drainMs, graceMs: config.SHUTDOWN_GRACE_MS, voiceSessions: app.voice.sessions.size },
      'draining',
    );
    try {
      // Readiness 503 and no new mints at once; live calls go on (their heartbeats, gates and media still land here)
      // until they end or the drain timeout passes; then the rest end with `shutdown`, settled once, in close().
      await Promise.race([app.drain(drainMs), hurried]);
      if (app.voice.sessions.size > 0)
        log.warn(
          { voiceSessions: app.voice.sessions.size },
          'drain over: ending the remaining voice calls with shutdown',
        );
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
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`parley failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
