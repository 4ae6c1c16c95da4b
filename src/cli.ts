/**
 * The operator CLI (`npm run cli -- <command> ...`): bootstraps an installation without a dashboard.
 *
 * With the embedded database and a server running on it, the command goes to that server through its operator
 * socket (src/admin/operator-socket.ts): PGlite admits one process.
 *
 *   migrate
 *   user:create --email E (--password P | --password-stdin) [--name N]   -> {userId, accountId, email}
 *   key:create  --email E --scopes chat,voice [--name N]                  -> {keyId, secret, scopes}
 *   admin:grant --email E / admin:revoke --email E                       -> {operator}
 *   admin:list                                                            -> {operators}
 *   recordings:migrate                                                    -> {moved, alreadyStored, failed, bytes}
 *
 * Contract for scripts: exactly one JSON object on stdout (the result, or {error, code} on failure); logs and
 * human messages on stderr. Exit 0 success, 2 bad arguments (nothing was changed), 1 any other failure.
 */
import { parseArgs } from 'node:util';
import { CLI_USAGE, commands, UsageError, type Command, type Values } from './admin/cli-commands.js';
import { sendToRunningServer } from './admin/operator-socket.js';
import { ConfigError, loadConfig } from './config/index.js';
import type { Database } from './db/index.js';
import { isAppError } from './errors/index.js';

const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

const RECORDINGS_MIGRATE = 'recordings:migrate';
const USAGE = `${CLI_USAGE}

  recordings:migrate                        move recordings kept on disk (DATA_DIR/recordings) into the bucket
                                            (RECORDINGS_STORE=s3); run it again until failed is 0`;

/**
 * recordings:migrate: needs the bucket's settings, not the database (works while the server runs). Idempotent; the
 * result counts what moved.
 */
async function migrateRecordings(): Promise<number> {
  const config = configOrReport();
  if (!config) return EXIT_FAILURE;
  if (config.RECORDINGS_STORE !== 's3') {
    const error = 'recordings:migrate moves recordings into the bucket: set RECORDINGS_STORE=s3 and the S3_* settings';
    process.stderr.write(`error: ${error}\n`);
    printResult({ error, code: 'RECORDINGS_STORE_NOT_S3' });
    return EXIT_USAGE;
  }
  const [{ createLogger }, voice, { resolve }] = await Promise.all([
    import('./log/index.js'),
    import('./voice/index.js'),
    import('node:path'),
  ]);
  const log = createLogger({ level: config.LOG_LEVEL, name: 'parley-cli' }, process.stderr);
  const dir = resolve(config.DATA_DIR, 'recordings');
  const store = voice.createRecordingStore(config, dir);
  try {
    const report = await voice.migrateDiskRecordings(dir, store, log);
    printResult({ ok: report.failed === 0, ...report });
    return report.failed === 0 ? EXIT_OK : EXIT_FAILURE;
  } finally {
    store.close();
  }
}

function parse(argv: string[]): { command: string | undefined; values: Values } {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        email: { type: 'string' },
        password: { type: 'string' },
        'password-stdin': { type: 'boolean' },
        name: { type: 'string' },
        scopes: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
    return { command: values.help ? 'help' : positionals[0], values };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError((err as Error).message);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** A result's `note` (what to do next) for the person at the terminal: stderr, so stdout stays one JSON object. */
function sayNote(result: Record<string, unknown>): void {
  if (typeof result['note'] === 'string') process.stderr.write(`${result['note']}\n`);
}

/** The configuration, or undefined once every problem with it is printed (stderr, and the JSON result). */
function configOrReport(): ReturnType<typeof loadConfig> | undefined {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    printResult({ error: 'invalid configuration', code: 'CONFIG_INVALID', problems: err.problems });
    return undefined;
  }
}

function printResult(value: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

async function run(argv: string[]): Promise<number> {
  let work: Awaited<ReturnType<Command['prepare']>>;
  let request: { command: string; values: Values };
  try {
    const { command, values } = parse(argv);
    if (command === 'help') {
      process.stderr.write(`${USAGE}\n`);
      printResult({ commands: [...Object.keys(commands), RECORDINGS_MIGRATE] });
      return EXIT_OK;
    }
    if (command === undefined) throw new UsageError('give a command');
    if (command === RECORDINGS_MIGRATE) {
      if (Object.values(values).some((v) => v !== undefined)) throw new UsageError(`${command} takes no options`);
      return await migrateRecordings();
    }
    const found = commands[command];
    if (!found) throw new UsageError(`unknown command "${command}"`);
    // The password from stdin is read here, so the same arguments can be handed to a running server.
    if (values['password-stdin'] && values['password'] === undefined) {
      values['password'] = await readStdin();
      delete values['password-stdin'];
    }
    work = await found.prepare(values);
    request = { command, values };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n${USAGE}\n`);
    printResult({ error: err.message, code: err.code });
    return EXIT_USAGE;
  }

  const config = configOrReport();
  if (!config) return EXIT_FAILURE;
  // The database client and the logger load only once the arguments are good: a usage error answers sooner.
  const [{ openDatabase }, { createLogger }] = await Promise.all([import('./db/index.js'), import('./log/index.js')]);
  // Logs go to stderr: stdout carries only the one JSON result.
  const log = createLogger({ level: config.LOG_LEVEL, name: 'parley-cli' }, process.stderr);
  let db: Database | undefined;
  try {
    if (config.DATABASE_URL === undefined) {
      const answer = await sendToRunningServer(config.DATA_DIR, request);
      if (answer !== undefined) {
        log.info({ dataDir: config.DATA_DIR }, 'ran by the server that holds the embedded database');
        if (answer.ok) {
          sayNote(answer.result);
          printResult(answer.result);
          return EXIT_OK;
        }
        process.stderr.write(`error: ${answer.error}\n`);
        printResult({ error: answer.error, code: answer.code });
        return answer.usage ? EXIT_USAGE : EXIT_FAILURE;
      }
    }
    db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolSize: 1, log });
    const result = await work(db.sql, db.applied, {
      adminUserIds: config.ADMIN_USER_IDS,
      selfHosted: config.SELF_HOSTED,
    });
    sayNote(result);
    printResult(result);
    return EXIT_OK;
  } catch (err) {
    const code = isAppError(err)
      ? err.code
      : (((err as { code?: unknown }).code as string | undefined) ?? 'CLI_FAILED');
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`error: ${message}\n`);
    printResult({
      error: message,
      code: typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code) ? code : 'CLI_FAILED',
    });
    return isAppError(err) && err.status === 400 ? EXIT_USAGE : EXIT_FAILURE;
  } finally {
    await db?.close().catch((err: unknown) => log.warn({ err }, 'closing the database failed'));
  }
}

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    printResult({ error: 'unexpected failure', code: 'CLI_FAILED' });
    process.exitCode = EXIT_FAILURE;
  },
);
