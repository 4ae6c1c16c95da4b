/**
 * The process: read config, create deps, build the app, listen, drain on SIGTERM.
 * The only file that listens or exits.
 */
import { startupHint, startupLine } from './admin/index.js';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config/index.js';
import type { Sql } from './db/index.js';
import { createDeps } from './deps.js';
import { createLogger, type Logger } from './log/index.js';

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
  // Pretty lines for a person at a terminal (`npm start`), JSON for anything that collects them.
  const format = config.LOG_FORMAT === 'auto' ? (process.stdout.isTTY ? 'pretty' : 'json') : config.LOG_FORMAT;
  const log = createLogger({ level: config.LOG_LEVEL, format });
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
  await sayWhereToStart(deps.sql, config, port, log);

  let signals = 0;
  let hurry: () => void = () => undefined;
  const hurried = new Promise<void>((resolve) => (hurry = resolve));
  let stage = 'voice drain';
  const stop = async (signal: string) => {
    signals += 1;
    if (signals === 2) {
      // A second signal: stop waiting for live calls; they end with `shutdown` now.
      log.warn({ signal, stage }, 'second signal: ending the remaining voice calls now (a third exits at once)');
      hurry();
      return;
    }
    if (signals > 2) {
      log.error({ signal, stage }, 'third signal: exiting now');
      log.flush();
      process.exit(1);
    }
    const drainMs = config.VOICE_DRAIN_TIMEOUT_SECONDS * 1000;
    const graceMs = config.SHUTDOWN_GRACE_MS;
    log.info({ signal, voiceDrainMs: drainMs, graceMs, voiceSessions: app.voice.sessions.size }, 'draining');
    // Whatever is stuck (a query that never answers, a background job that never returns), the process ends within
    // the drain timeout plus the grace plus the close budgets: each step below is bounded, and this is the backstop.
    const watchdog = setTimeout(
      () => {
        log.error({ stage, limitMs: drainMs + graceMs + SHUTDOWN_MARGIN_MS }, 'shutdown did not finish: exiting');
        log.flush();
        process.exit(1);
      },
      drainMs + graceMs + SHUTDOWN_MARGIN_MS,
    );
    watchdog.unref();
    let clean = true;
    const step = async (name: string, work: () => Promise<void>, limitMs: number): Promise<void> => {
      stage = name;
      const outcome = await within(work(), limitMs);
      if (outcome === 'done') return;
      clean = false;
      if (outcome === 'late') log.error({ stage: name, limitMs }, 'shutdown step did not finish in time; going on');
      else log.error({ stage: name, err: outcome.err }, 'shutdown step failed; going on');
    };
    // Readiness 503 and no new mints at once; live calls go on (their heartbeats, gates and media still land here)
    // until they end or the drain timeout passes; then the rest end with `shutdown`, settled once, in close().
    await step('voice drain', () => Promise.race([app.drain(drainMs), hurried]), drainMs + 1000);
    if (app.voice.sessions.size > 0)
      log.warn(
        { voiceSessions: app.voice.sessions.size },
        'drain over: ending the remaining voice calls with shutdown',
      );
    await step('requests and background work', () => app.close(graceMs), graceMs + CLOSE_STEP_MS);
    await step('database and store', () => deps.close(), CLOSE_STEP_MS);
    stage = 'exit';
    log.info({ clean }, 'stopped');
    log.flush();
    process.exitCode = clean ? 0 : 1;
    // Anything still holding the loop after a clean drain is a bug; do not hang the supervisor.
    setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref();
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/**
 * One line for the person who just started the server: the dashboard's address and, while no owner exists, the
 * command that creates one. Printed as is on a terminal; otherwise a log line whose fields say both. It never stops
 * the start: a failure to look is a warning.
 */
async function sayWhereToStart(sql: Sql, config: Readonly<Config>, port: number, log: Logger): Promise<void> {
  try {
    const hint = await startupHint(sql, config, port);
    if (process.stdout.isTTY) process.stdout.write(`\n  ${startupLine(hint)}\n\n`);
    else
      log.info(
        { ...hint },
        hint.createOwner === undefined ? 'open the dashboard' : 'open the dashboard; create the first owner',
      );
  } catch (err) {
    log.warn({ err }, 'could not tell whether an owner exists');
  }
}

/** How long closing the HTTP server past its grace, and closing the database and store, may take each. */
const CLOSE_STEP_MS = 7_000;
/** The backstop past drain + grace: both close steps and the final second. */
const SHUTDOWN_MARGIN_MS = 2 * CLOSE_STEP_MS + 2_000;

/** Settles with the work's outcome, or 'late' after `ms` (the work goes on, unawaited). */
function within(work: Promise<void>, ms: number): Promise<'done' | 'late' | { err: unknown }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('late'), ms);
    work.then(
      () => {
        clearTimeout(timer);
        resolve('done');
      },
      (err: unknown) => {
        clearTimeout(timer);
        resolve({ err });
      },
    );
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`parley failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
