import type { Sql } from '../db/index.js';
import { hasAnyUser } from './operator-queries.js';

/** The command that creates the first owner (the password is read from stdin, so it stays out of the shell history). */
export const CREATE_OWNER_COMMAND = 'npm run cli -- user:create --email you@example.com --password-stdin';

/** What the start-up line tells the person who just started the server. */
export interface StartupHint {
  /** Where the dashboard answers, e.g. http://127.0.0.1:3000/dashboard/. */
  dashboard: string;
  /** Set when no user exists yet: the command that creates the first owner. */
  createOwner?: string;
  /** Whether that first owner becomes the server's operator (SELF_HOSTED). */
  firstOwnerIsOperator?: boolean;
}

/**
 * The dashboard's address as a person opens it: PUBLIC_URL when set; else the listening address, with a wildcard
 * host (0.0.0.0, ::) shown as 127.0.0.1 (a browser cannot open the wildcard).
 */
export function dashboardUrl(config: { PUBLIC_URL?: string | undefined; HOST: string }, port: number): string {
  if (config.PUBLIC_URL !== undefined) return new URL('/dashboard/', config.PUBLIC_URL).toString();
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' || config.HOST === '' ? '127.0.0.1' : config.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/dashboard/`;
}

export async function startupHint(
  sql: Sql,
  config: { PUBLIC_URL?: string | undefined; HOST: string; SELF_HOSTED: boolean },
  port: number,
): Promise<StartupHint> {
  const dashboard = dashboardUrl(config, port);
  if (await hasAnyUser(sql)) return { dashboard };
  return { dashboard, createOwner: CREATE_OWNER_COMMAND, firstOwnerIsOperator: config.SELF_HOSTED };
}

/** The hint as one line a person reads in a terminal. */
export function startupLine(hint: StartupHint): string {
  const open = `Parley is ready: open ${hint.dashboard}`;
  if (hint.createOwner === undefined) return open;
  const operator = hint.firstOwnerIsOperator ? ' (the first owner is this server\u2019s operator)' : '';
  return `${open} \u2014 no owner yet: create one with \`${hint.createOwner}\`${operator}, then sign in`;
}

/**
 * The command that creates the first owner while the server has no user, else null: what the sign-in page tells a
 * visitor to a fresh server. Once a user exists the answer stays null without asking the database again (users are
 * not deleted back to none in normal operation).
 */
export function firstOwnerCommand(sql: Sql): () => Promise<string | null> {
  let ownerExists = false;
  return async () => {
    if (ownerExists) return null;
    ownerExists = await hasAnyUser(sql);
    return ownerExists ? null : CREATE_OWNER_COMMAND;
  };
}
