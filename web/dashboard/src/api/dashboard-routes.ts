/**
 * The dashboard-only routes: cookie-session routes kept out of the v1 OpenAPI document (docs/design-decisions.md)
 * (sign-in, keys, uploads and sources, evals, recordings, usage, billing, admin). Their types are generated from
 * the server's route table like the SDK's (./generated/dashboard-routes.ts; `npm run dashboard:generate`), so a
 * wrong path, body or answer shape is a compile error here too.
 */
import { errorFromAnswer, networkError } from '@parley/sdk';
import { sessionFetch } from './client.js';
import { scopes, type paths } from './generated/dashboard-routes.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Path<M extends Method> = { [P in keyof paths]: paths[P][M] extends undefined ? never : P }[keyof paths];
type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;
/** The JSON body of an operation's success answer (200, 201 or 202). */
export type Answer<P extends keyof paths, M extends Method> =
  Op<P, M> extends { responses: infer R }
    ? R extends { 200: infer S }
      ? JsonOf<S>
      : R extends { 201: infer S }
        ? JsonOf<S>
        : R extends { 202: infer S }
          ? JsonOf<S>
          : never
    : never;
/** The JSON request body of an operation. */
export type RequestBody<P extends keyof paths, M extends Method> =
  Op<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type PathParams<P extends keyof paths, M extends Method> =
  Op<P, M> extends { parameters: { path: infer X } } ? X : never;
type Query<P extends keyof paths, M extends Method> = Op<P, M> extends { parameters: { query?: infer X } } ? X : never;

interface CallOptions {
  path?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One typed call: `{name}` placeholders filled from `path`, JSON (or a Blob) body, ParleyError on any non-2xx. */
async function call<M extends Method, P extends Path<M>>(
  method: M,
  path: P,
  options: {
    path?: PathParams<P, M>;
    query?: Query<P, M>;
    body?: RequestBody<P, M> | Blob;
    headers?: Record<string, string>;
  } = {},
): Promise<Answer<P, M>> {
  const o = options as CallOptions;
  let url = (path as string).replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(o.path?.[name] ?? ''));
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) query.set(k, String(v));
  if (query.size > 0) url += `?${query}`;
  const headers: Record<string, string> = { accept: 'application/json', ...o.headers };
  let payload: BodyInit | undefined;
  if (o.body instanceof Blob) payload = o.body;
  else if (o.body !== undefined || method !== 'get') {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(o.body ?? {});
  }
  let res: Response;
  try {
    res = await sessionFetch(url, {
      method: method.toUpperCase(),
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
    });
  } catch (err) {
    throw networkError(err);
  }
  const text = await res.text();
  if (!res.ok) throw errorFromAnswer(res.status, res.headers, text);
  return (text === '' ? undefined : JSON.parse(text)) as Answer<P, M>;
}

export type SessionUser = Answer<'/api/auth/me', 'get'>;
export type AccountStatus = SessionUser['account']['status'];
export type ApiKey = Answer<'/api/account/keys', 'get'>['keys'][number];
export type Scope = ApiKey['scopes'][number];
export type DashboardConfig = Answer<'/api/dashboard/config', 'get'>;
export type UsageSummary = Answer<'/api/v1/account/usage/summary', 'get'>['summary'];
export type UsageLimits = Answer<'/api/v1/account/usage/limits', 'get'>['limits'];
export type UsageEvent = Answer<'/api/v1/account/usage/recent', 'get'>['events'][number];
export type Budget = Answer<'/api/v1/account/budget', 'get'>['budget'];
export type BudgetSettings = RequestBody<'/api/v1/account/budget', 'put'>;
export type UsageForecast = Answer<'/api/v1/account/usage/forecast', 'get'>['forecast'];
export type DailyUsage = Answer<'/api/v1/account/usage/daily', 'get'>;
export type Billing = Answer<'/api/v1/account/billing', 'get'>['billing'];
export type PaidPlan = RequestBody<'/api/v1/account/billing/checkout', 'post'>['planCode'];
export type AdminAccount = Answer<'/api/admin/accounts', 'get'>['accounts'][number];
export type PlanCode = AdminAccount['planCode'];
export type AdminPatch = RequestBody<'/api/admin/accounts/{id}', 'patch'>;
export type AuditEntry = Answer<'/api/admin/audit', 'get'>['entries'][number];
export type EvalDetail = Answer<'/api/assistants/{assistantId}/evals/{evalId}', 'get'>;
export type EvalRun = EvalDetail['eval'];
export type EvalCase = EvalDetail['cases'][number];
export type EvalCaseInput = RequestBody<'/api/assistants/{assistantId}/evals', 'post'>['cases'][number];
export type SourceInput = RequestBody<'/api/assistants/{assistantId}/sources', 'post'>;

/** The API key scopes, in the server's order: generated with the types (the server's list, not a copy of it). */
export const SCOPES = scopes;

let config: Promise<DashboardConfig> | undefined;

export const dashboardApi = {
  /** What this server offers the dashboard (sign-up, the voice widget); asked once per page load. */
  config: () =>
    (config ??= call('get', '/api/dashboard/config').catch((err: unknown) => {
      config = undefined;
      throw err;
    })),
  me: () => call('get', '/api/auth/me'),
  login: (email: string, password: string) => call('post', '/api/auth/login', { body: { email, password } }),
  /** Routed only when SIGNUP_ENABLED (so absent from the generated table): sign-in's body plus a name, the same answer. */
  signup: (body: RequestBody<'/api/auth/login', 'post'> & { name?: string }) =>
    call('post', '/api/auth/signup' as '/api/auth/login', { body }),
  logout: () => call('post', '/api/auth/logout', { body: {} }),

  listKeys: () => call('get', '/api/account/keys'),
  createKey: (name: string, scopes: Scope[]) => call('post', '/api/account/keys', { body: { name, scopes } }),
  revokeKey: (keyId: string) => call('delete', '/api/account/keys/{keyId}', { path: { keyId } }),

  upload: (assistantId: string, file: File) =>
    call('post', '/api/assistants/{assistantId}/uploads', {
      path: { assistantId },
      query: { filename: file.name },
      body: file,
      headers: { 'content-type': file.type || 'application/octet-stream' },
    }),
  addSource: (assistantId: string, source: SourceInput) =>
    call('post', '/api/assistants/{assistantId}/sources', { path: { assistantId }, body: source }),

  startEval: (assistantId: string, cases: EvalCaseInput[]) =>
    call('post', '/api/assistants/{assistantId}/evals', { path: { assistantId }, body: { cases } }),
  getEval: (assistantId: string, evalId: string) =>
    call('get', '/api/assistants/{assistantId}/evals/{evalId}', { path: { assistantId, evalId } }),

  usageSummary: () => call('get', '/api/v1/account/usage/summary'),
  usageLimits: () => call('get', '/api/v1/account/usage/limits'),
  usageRecent: (limit = 200) => call('get', '/api/v1/account/usage/recent', { query: { limit } }),
  usageDaily: () => call('get', '/api/v1/account/usage/daily'),
  usageForecast: () => call('get', '/api/v1/account/usage/forecast'),
  budget: () => call('get', '/api/v1/account/budget'),
  setBudget: (body: BudgetSettings) => call('put', '/api/v1/account/budget', { body }),

  billing: () => call('get', '/api/v1/account/billing'),
  checkout: (planCode: PaidPlan) => call('post', '/api/v1/account/billing/checkout', { body: { planCode } }),
  portal: () => call('post', '/api/v1/account/billing/portal', { body: {} }),

  adminAccounts: (offset = 0) => call('get', '/api/admin/accounts', { query: { limit: 50, offset } }),
  adminPatch: (id: string, patch: AdminPatch) =>
    call('patch', '/api/admin/accounts/{id}', { path: { id }, body: patch }),
  adminCredit: (id: string, creditMicros: number) =>
    call('post', '/api/admin/accounts/{id}/credit', { path: { id }, body: { creditMicros } }),
  adminAudit: (offset = 0) => call('get', '/api/admin/audit', { query: { limit: 50, offset } }),
};
