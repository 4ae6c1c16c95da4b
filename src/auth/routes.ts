import { z } from 'zod';
import { defineRoute, reply, type AnyRoute, type RequestContext } from '../http/index.js';
import { isCrossOrigin, isSameOrigin } from './csrf.js';
import { authErrors } from './errors.js';
import { idPattern } from './ids.js';
import { ownerOf } from './principal.js';
import { ResilientRateLimiter } from './resilient-limiter.js';
import { createApiKey, createUser, listApiKeys, revokeApiKey } from './service.js';
import {
  countLoginAttempt,
  describeUser,
  openSession,
  secureCookies,
  signIn,
  signOut,
  type SessionUser,
  type StartedSession,
} from './sessions.js';
import { clearedSessionCookie, readCookie, SESSION_COOKIE, sessionCookie } from './session-token.js';
import type { IdentityDeps } from './types.js';
import { displayNameSchema, emailSchema, loginPasswordSchema, newPasswordSchema, scopesSchema } from './validation.js';
import { SCOPES } from './principal.js';

const userSchema = z.object({ id: z.string(), email: z.string(), name: z.string().nullable(), isAdmin: z.boolean() });
const accountSchema = z.object({ id: z.string(), status: z.enum(['active', 'suspended', 'disabled']) });
const sessionUserSchema = z.object({ user: userSchema, account: accountSchema });
const keySchema = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  prefix: z.string().describe('The first characters of the secret, for recognising a key; not usable.'),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
});
const okSchema = z.object({ ok: z.literal(true) });
const dashboard = { tags: ['dashboard'], hidden: true as const };

/**
 * Dashboard identity routes: sign-in, sign-out, who am I, sign-up (only when SIGNUP_ENABLED), and API key
 * management. None is part of the v1 document (openapi.hidden).
 */
export function identityRoutes(deps: IdentityDeps): AnyRoute[] {
  const limiter = new ResilientRateLimiter(deps.store, deps.log);
  const secure = secureCookies(deps);

  const startSession = (ctx: RequestContext, started: StartedSession): SessionUser => {
    ctx.setCookies.push(sessionCookie(started.cookieValue, { secure, maxAgeSeconds: started.maxAgeSeconds }));
    return { user: started.user, account: started.account };
  };

  /** Login CSRF: a browser on another site must not sign this browser into some account. */
  const refuseCrossOrigin = (ctx: RequestContext) => {
    if (isCrossOrigin(ctx, deps.config.PUBLIC_URL, deps.config.TRUST_PROXY)) throw authErrors.csrf();
  };

  const routes: AnyRoute[] = [
    defineRoute({
      method: 'POST',
      path: '/api/auth/login',
      auth: 'none',
      schemas: {
        body: z.object({ email: z.string().trim().min(1).max(254), password: loginPasswordSchema }),
        response: { 200: sessionUserSchema },
      },
      openapi: {
        summary: 'Sign in (sets the session cookie)',
        ...dashboard,
        errors: { 401: 'Wrong email or password', 429: 'Too many attempts' },
      },
      handler: async (ctx) => {
        refuseCrossOrigin(ctx);
        await countLoginAttempt(limiter, ctx.body.email, ctx.ip);
        const started = await signIn(deps, {
          email: ctx.body.email,
          password: ctx.body.password,
          ip: ctx.ip,
          userAgent: ctx.headers['user-agent'],
        });
        ctx.log.info({ userId: started.user.id }, 'signed in');
        return reply.json(startSession(ctx, started));
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/logout',
      auth: 'none',
      schemas: { body: z.object({}), response: { 200: okSchema } },
      openapi: { summary: 'Sign out (revokes the session)', ...dashboard },
      handler: async (ctx) => {
        const cookie = readCookie(ctx.headers['cookie'], SESSION_COOKIE);
        if (cookie !== undefined) {
          // Cookie-authenticated mutation: same Origin rule as every session route.
          if (!isSameOrigin(ctx, deps.config.PUBLIC_URL, deps.config.TRUST_PROXY)) throw authErrors.csrf();
          await signOut(deps, cookie);
        }
        ctx.setCookies.push(clearedSessionCookie(secure));
        return reply.json({ ok: true });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/auth/me',
      auth: 'session',
      schemas: { response: { 200: sessionUserSchema } },
      openapi: { summary: 'The signed-in user and their account', ...dashboard, errors: { 401: 'Not signed in' } },
      handler: async (ctx) => {
        const described = await describeUser(deps, ownerOf(ctx).userId);
        if (!described) throw authErrors.sessionRequired();
        return reply.json(described);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/account/keys',
      auth: 'session',
      schemas: { response: { 200: z.object({ keys: z.array(keySchema) }) } },
      openapi: { summary: 'List the active API keys of the account', ...dashboard },
      handler: async (ctx) => reply.json({ keys: await listApiKeys(deps.sql, ownerOf(ctx).accountId) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/account/keys',
      auth: 'session',
      schemas: {
        body: z.object({ name: displayNameSchema, scopes: scopesSchema }),
        response: { 201: z.object({ key: keySchema, secret: z.string().describe('Shown only in this answer.') }) },
      },
      openapi: {
        summary: 'Create an API key (the secret is shown once)',
        ...dashboard,
        errors: { 409: 'Too many active keys' },
      },
      handler: async (ctx) => {
        const owner = ownerOf(ctx);
        const created = await createApiKey(deps.sql, {
          accountId: owner.accountId,
          userId: owner.userId,
          name: ctx.body.name,
          scopes: ctx.body.scopes,
        });
        ctx.log.info({ keyId: created.keyId, scopes: created.scopes }, 'api key created');
        return reply.json({ key: created.key, secret: created.secret }, 201, { 'cache-control': 'no-store' });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/account/keys/:keyId',
      auth: 'session',
      schemas: {
        params: z.object({ keyId: z.string().regex(idPattern('key'), { error: 'must be a key id (key_...)' }) }),
        response: { 200: okSchema },
      },
      openapi: {
        summary: 'Revoke an API key (effective on the next request)',
        ...dashboard,
        errors: { 404: 'No such key in this account' },
      },
      handler: async (ctx) => {
        const owner = ownerOf(ctx);
        if (!(await revokeApiKey(deps.sql, deps.store, { accountId: owner.accountId, keyId: ctx.params.keyId })))
          throw authErrors.keyNotFound();
        ctx.log.info({ keyId: ctx.params.keyId }, 'api key revoked');
        return reply.json({ ok: true });
      },
    }),
  ];

  if (deps.config.SIGNUP_ENABLED) {
    routes.push(
      defineRoute({
        method: 'POST',
        path: '/api/auth/signup',
        auth: 'none',
        schemas: {
          body: z.object({ email: emailSchema, password: newPasswordSchema, name: displayNameSchema.optional() }),
          response: { 201: sessionUserSchema },
        },
        openapi: {
          summary: 'Create a user and sign in (only when SIGNUP_ENABLED)',
          ...dashboard,
          errors: { 409: 'Email already registered' },
        },
        handler: async (ctx) => {
          refuseCrossOrigin(ctx);
          await countLoginAttempt(limiter, ctx.body.email, ctx.ip);
          const created = await createUser(deps.sql, ctx.body);
          const started = await openSession(deps, {
            userId: created.userId,
            email: created.email,
            name: ctx.body.name ?? null,
            accountId: created.accountId,
            accountStatus: 'active',
            ip: ctx.ip,
            userAgent: ctx.headers['user-agent'],
          });
          ctx.log.info({ userId: created.userId }, 'signed up');
          return reply.json(startSession(ctx, started), 201);
        },
      }),
    );
  }
  return routes;
}
