/**
 * The operator CLI (`npm run cli -- <command> ...`): bootstraps an installation without a dashboard.
 *
 *   migrate
 *   user:create --email E (--password P | --password-stdin) [--name N]   -> {userId, accountId, email}
 *   key:create  --email E --scopes chat,voice [--name N]                  -> {keyId, secret, scopes}
 *
 * Contract for scripts: exactly one JSON object on stdout (the result, or {error, code} on failure); logs and
 * human messages on stderr. Exit 0 success, 2 bad arguments (nothing was changed), 1 any other failure.
 */
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import { createApiKey, createUser, findUserByEmail, SCOPES } from './auth/index.js';
import { displayNameSchema, emailSchema, newPasswordSchema } from './auth/validation.js';
import { ConfigError, loadConfig } from './config/index.js';
import { openDatabase, type Database } from './db/index.js';
import { isAppError } from './errors/index.js';
import { createLogger, type Logger } from './log/index.js';

const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

const USAGE = `usage: npm run cli -- <command> [options]
  migrate                                   apply pending database migrations
  user:create --email E --password P [--name N]
              (or --password-stdin to read the password from stdin, keeping it out of the process list)
  key:create  --email E --scopes ${SCOPES.join(',')} [--name N]
scopes: ${SCOPES.join(', ')}`;

/** A bad invocation: exit 2, nothing touched. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly code = 'CLI_BAD_ARGUMENTS',
  ) {
    super(message);
  }
}

type Values = Record<string, string | boolean | undefined>;

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

function field<T>(schema: z.ZodType<T>, value: unknown, flag: string): T {
  if (value === undefined) throw new UsageError(`--${flag} is required`);
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new UsageError(`--${flag} ${parsed.error.issues[0]?.message ?? 'is not valid'}`);
  return parsed.data;
}

function allowOnly(values: Values, allowed: string[], command: string): void {
  for (const [flag, value] of Object.entries(values)) {
    if (value !== undefined && !allowed.includes(flag)) throw new UsageError(`${command} does not take --${flag}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

interface Command {
  /** Validates the arguments before anything is opened; returns the work to do. */
  prepare(values: Values): Promise<(db: Database, log: Logger) => Promise<Record<string, unknown>>>;
}

const commands: Record<string, Command> = {
  migrate: {
    async prepare(values) {
      allowOnly(values, [], 'migrate');
      // openDatabase applies pending migrations; report what this run applied.
      return async (db) => ({ ok: true, applied: db.applied.map((m) => ({ version: m.version, name: m.name })) });
    },
  },
  'user:create': {
    async prepare(values) {
      allowOnly(values, ['email', 'password', 'password-stdin', 'name'], 'user:create');
      const email = field(emailSchema, values['email'], 'email');
      if (values['password'] !== undefined && values['password-stdin'])
        throw new UsageError('give --password or --password-stdin, not both');
      const rawPassword = values['password-stdin'] ? await readStdin() : values['password'];
      const password = field(newPasswordSchema, rawPassword, 'password');
      const name = values['name'] === undefined ? undefined : field(displayNameSchema, values['name'], 'name');
      return async (db) => {
        const created = await createUser(db.sql, { email, password, name }, { audit: { actorUserId: null } });
        return { userId: created.userId, accountId: created.accountId, email: created.email };
      };
    },
  },
  'key:create': {
    async prepare(values) {
      allowOnly(values, ['email', 'scopes', 'name'], 'key:create');
      const email = field(emailSchema, values['email'], 'email');
      const rawScopes = values['scopes'];
      if (typeof rawScopes !== 'string' || rawScopes.trim() === '')
        throw new UsageError('--scopes is required (comma-separated)');
      const scopes = rawScopes
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
      if (unknown.length > 0)
        throw new UsageError(
          `unknown scopes: ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`,
          'CLI_UNKNOWN_SCOPE',
        );
      if (scopes.length === 0) throw new UsageError('--scopes needs at least one scope');
      const name = values['name'] === undefined ? 'Operator key' : field(displayNameSchema, values['name'], 'name');
      return async (db) => {
        const user = await findUserByEmail(db.sql, email);
        if (!user) throw Object.assign(new Error(`no user with email ${email}`), { code: 'AUTH_USER_NOT_FOUND' });
        const created = await createApiKey(
          db.sql,
          { accountId: user.accountId, userId: user.id, name, scopes },
          { audit: { actorUserId: null } },
        );
        return { keyId: created.keyId, secret: created.secret, scopes: created.scopes };
      };
    },
  },
};

function printResult(value: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

async function run(argv: string[]): Promise<number> {
  let work: Awaited<ReturnType<Command['prepare']>>;
  try {
    const { command, values } = parse(argv);
    if (command === 'help') {
      process.stderr.write(`${USAGE}\n`);
      printResult({ commands: Object.keys(commands) });
      return EXIT_OK;
    }
    if (command === undefined) throw new UsageError('give a command');
    const found = commands[command];
    if (!found) throw new UsageError(`unknown command "${command}"`);
    work = await found.prepare(values);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n${USAGE}\n`);
    printResult({ error: err.message, code: err.code });
    return EXIT_USAGE;
  }

  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    printResult({ error: 'invalid configuration', code: 'CONFIG_INVALID', problems: err.problems });
    return EXIT_FAILURE;
  }
  // Logs go to stderr: stdout carries only the one JSON result.
  const log = createLogger({ level: config.LOG_LEVEL, name: 'parley-cli' }, process.stderr);
  let db: Database | undefined;
  try {
    db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolSize: 1, log });
    printResult(await work(db, log));
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
