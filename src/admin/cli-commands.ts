/**
 * The operator commands (migrate, user:create, key:create, admin:grant, admin:revoke, admin:list), shared by the CLI (src/cli.ts), which runs them on the
 * database it opens, and by the operator socket (./operator-socket.ts), which runs them inside a server that holds
 * the embedded database. Arguments are checked before anything is opened (a bad one is a UsageError: exit 2).
 */
import type { z } from 'zod';
import { createApiKey, createUser, findUserByEmail, SCOPES } from '../auth/index.js';
import { displayNameSchema, emailSchema, newPasswordSchema } from '../auth/validation.js';
import type { Sql } from '../db/index.js';
import { hasAnyUser } from './operator-queries.js';
import { grantOperator, listOperators, revokeOperator } from './operators.js';

export type Applied = ReadonlyArray<{ version: number | string; name: string }>;

export const CLI_USAGE = `usage: npm run cli -- <command> [options]
  migrate                                   apply pending database migrations
  user:create --email E --password P [--name N]
              (or --password-stdin to read the password from stdin, keeping it out of the process list)
  key:create  --email E --scopes ${SCOPES.join(',')} [--name N]
  admin:grant  --email E                    make a user an operator (dashboard Admin, /api/admin/*), at once
  admin:revoke --email E                    take that back (users listed in ADMIN_USER_IDS stay operators)
  admin:list                                operators: granted here or listed in ADMIN_USER_IDS
scopes: ${SCOPES.join(', ')}

With the embedded database, these work while the server runs: the CLI hands them to it through its operator
socket (DATA_DIR/operator.sock, usable only by the user running the server).`;

/** Said (on stderr, and in the result's `note`) when the first owner of a self-hosted server is made its operator. */
const FIRST_OWNER_NOTE =
  'The first owner of a self-hosted server is its operator (dashboard Admin: plans, credit, accounts).';

/** Said for every other user: how an operator is made (plans and credit are changed in the dashboard's Admin). */
const operatorNote = (email: string) =>
  `To make this user an operator (dashboard Admin: plans, credit, accounts): npm run cli -- admin:grant --email ${email}`;

/** A bad invocation: exit 2, nothing touched. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly code = 'CLI_BAD_ARGUMENTS',
  ) {
    super(message);
  }
}

export type Values = Record<string, string | boolean | undefined>;

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

/** What a command knows of its installation besides the database: the settings of whoever runs it. */
export interface CommandContext {
  adminUserIds: readonly string[];
  /** SELF_HOSTED: the first user created is the server's operator (there is nobody else to run it). */
  selfHosted: boolean;
}

export interface Command {
  /**
   * Validates the arguments before anything is opened; returns the work to do, given the database it runs on,
   * the migrations this run applied (none when it runs inside the server, which migrated at start), and the
   * configuration it runs under (the server's, when the server runs it).
   */
  prepare(
    values: Values,
  ): Promise<(sql: Sql, applied: Applied, context: CommandContext) => Promise<Record<string, unknown>>>;
}

/** admin:grant / admin:revoke: one user by --email, acted on by the CLI (audited with no actor user). */
function operatorCommand(name: string, change: typeof grantOperator): Command {
  return {
    async prepare(values) {
      allowOnly(values, ['email'], name);
      const email = field(emailSchema, values['email'], 'email');
      return async (sql, _applied, context) => ({
        operator: await change(sql, context.adminUserIds, { email }, { actorUserId: null }),
      });
    },
  };
}

export const commands: Record<string, Command> = {
  migrate: {
    async prepare(values) {
      allowOnly(values, [], 'migrate');
      // openDatabase applies pending migrations; report what this run applied.
      return async (_sql, applied) => ({
        ok: true,
        applied: applied.map((m) => ({ version: m.version, name: m.name })),
      });
    },
  },
  'user:create': {
    async prepare(values) {
      allowOnly(values, ['email', 'password', 'password-stdin', 'name'], 'user:create');
      const email = field(emailSchema, values['email'], 'email');
      if (values['password'] !== undefined && values['password-stdin'])
        throw new UsageError('give --password or --password-stdin, not both');
      // The CLI reads --password-stdin itself and passes the password on (see src/cli.ts).
      const rawPassword = values['password'];
      const password = field(newPasswordSchema, rawPassword, 'password');
      const name = values['name'] === undefined ? undefined : field(displayNameSchema, values['name'], 'name');
      return async (sql, _applied, context) => {
        const first = !(await hasAnyUser(sql));
        const created = await createUser(sql, { email, password, name }, { audit: { actorUserId: null } });
        const user = { userId: created.userId, accountId: created.accountId, email: created.email };
        if (first && context.selfHosted) {
          await grantOperator(sql, context.adminUserIds, { userId: created.userId }, { actorUserId: null });
          return { ...user, operator: true, note: FIRST_OWNER_NOTE };
        }
        return { ...user, operator: false, note: operatorNote(created.email) };
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
      return async (sql) => {
        const user = await findUserByEmail(sql, email);
        if (!user) throw Object.assign(new Error(`no user with email ${email}`), { code: 'AUTH_USER_NOT_FOUND' });
        const created = await createApiKey(
          sql,
          { accountId: user.accountId, userId: user.id, name, scopes },
          { audit: { actorUserId: null } },
        );
        return { keyId: created.keyId, secret: created.secret, scopes: created.scopes };
      };
    },
  },
  'admin:grant': operatorCommand('admin:grant', grantOperator),
  'admin:revoke': operatorCommand('admin:revoke', revokeOperator),
  'admin:list': {
    async prepare(values) {
      allowOnly(values, [], 'admin:list');
      return async (sql, _applied, context) => ({ operators: await listOperators(sql, context.adminUserIds) });
    },
  },
};
