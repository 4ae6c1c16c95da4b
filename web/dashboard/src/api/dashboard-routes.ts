/**
 * The dashboard-only routes: cookie-session routes that API-DECISIONS keeps out of the v1 OpenAPI document
 * (sign-in, keys, uploads and sources, evals, recordings, usage, billing, admin). Their shapes mirror the
 * servers' zod schemas (src/auth, src/documents, src/evals, src/metering, src/billing, src/admin routes.ts);
 * this file is the only place in web/ with hand-written API shapes.
 */
import { errorFromAnswer, networkError } from '../../../../sdk/src/errors.js';
import { sessionFetch, type DocumentRecord } from './client.js';

async function call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, init: RequestInit = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  let payload: BodyInit | undefined;
  if (body instanceof Blob) payload = body;
  else if (body !== undefined || method !== 'GET') {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body ?? {});
  }
  let res: Response;
  try {
    res = await sessionFetch(path, { method, headers: { ...headers, ...(init.headers as Record<string, string>) }, ...(payload !== undefined ? { body: payload } : {}), ...(init.signal ? { signal: init.signal } : {}) });
  } catch (err) {
    throw networkError(err);
  }
  const text = await res.text();
  if (!res.ok) throw errorFromAnswer(res.status, res.headers, text);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export type AccountStatus = 'active' | 'suspended' | 'disabled';
export type PlanCode = 'free' | 'starter' | 'pro' | 'business';
export const SCOPES = [
  'chat',
  'assistants:read',
  'assistants:write',
  'documents:read',
  'documents:write',
  'conversations:read',
  'analytics:read',
  'voice',
] as const;
export type Scope = (typeof SCOPES)[number];

export interface SessionUser {
  user: { id: string; email: string; name: string | null; isAdmin: boolean };
  account: { id: string; status: AccountStatus };
}
export interface ApiKey {
  id: string;
  name: string;
  scopes: Scope[];
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}
export interface UsageSummary {
  accountId: string;
  planCode: string;
  status: string;
  periodStart: string;
  periodEnd: string;
  limitMicros: number;
  consumedMicros: number;
  reservedMicros: number;
  remainingMicros: number;
  requestCount: number;
  monthlyRequestCap: number | null;
  enforcement: 'shadow' | 'enforce' | 'off';
  voice: { voiceSecondsUsed: number; voiceSecondsLimit: number; voiceSecondsReserved: number; playgroundVoiceSeconds: number };
}
export interface UsageLimits {
  planCode: string;
  budgetMicros: number;
  limitOverrideMicros: number | null;
  creditMicros: number;
  limitMicros: number;
  maxAssistants: number | null;
  monthlyRequestCap: number | null;
  evalsEnabled: boolean;
  voiceMinutes: number;
  voiceConcurrentCalls: number;
}
export interface UsageEvent {
  id: string;
  kind: string;
  source: string;
  assistantId: string | null;
  units: number;
  costMicros: number;
  createdAt: string;
}
export interface Billing {
  server: 'production' | 'sandbox';
  planCode: string;
  periodStart: string;
  periodEnd: string;
  subscription: { id: string; status: string | null; planCode: string | null } | null;
  plans: Array<{ planCode: Exclude<PlanCode, 'free'>; available: boolean; current: boolean }>;
}
export interface AdminAccount {
  id: string;
  name: string | null;
  ownerEmail: string;
  status: AccountStatus;
  planCode: PlanCode;
  periodStart: string;
  periodEnd: string;
  limitOverrideMicros: number | null;
  limitMicros: number;
  consumedMicros: number;
  reservedMicros: number;
  creditMicros: number;
  requestCount: number;
  createdAt: string;
}
export interface AuditEntry {
  id: string;
  actorUserId: string | null;
  action: string;
  targetType: string;
  targetId: string;
  before: unknown;
  after: unknown;
  requestId: string | null;
  createdAt: string;
}
export interface EvalRun {
  id: string;
  assistantId: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  caseCount: number;
  completedCount: number;
  averageScore: number | null;
  costMicros: number;
  error: { code: string; message: string } | null;
  createdAt: string;
  finishedAt: string | null;
}
export interface EvalCase {
  index: number;
  status: 'pending' | 'done';
  question: string;
  expected: string | null;
  answer: string | null;
  outcome: 'answered' | 'no_answer' | 'model_failure' | null;
  score: number | null;
  costMicros: number;
  error: string | null;
}
export type SourceInput =
  | { type: 'url'; url: string }
  | { type: 'text'; name: string; text: string }
  | { type: 'faq'; name: string; pairs: Array<{ question: string; answer: string }> };

const enc = encodeURIComponent;

/** What this server offers the dashboard; asked once per page load. */
export interface DashboardConfig {
  signupEnabled: boolean;
  /** The voice widget's script when this server serves it, else null. */
  widgetScript: string | null;
}
let config: Promise<DashboardConfig> | undefined;

export const dashboardApi = {
  config: () => (config ??= call<DashboardConfig>('GET', '/api/dashboard/config').catch((err: unknown) => {
    config = undefined;
    throw err;
  })),
  me: () => call<SessionUser>('GET', '/api/auth/me'),
  login: (email: string, password: string) => call<SessionUser>('POST', '/api/auth/login', { email, password }),
  signup: (body: { email: string; password: string; name?: string }) => call<SessionUser>('POST', '/api/auth/signup', body),
  logout: () => call<{ ok: true }>('POST', '/api/auth/logout', {}),

  listKeys: () => call<{ keys: ApiKey[] }>('GET', '/api/account/keys'),
  createKey: (name: string, scopes: Scope[]) => call<{ key: ApiKey; secret: string }>('POST', '/api/account/keys', { name, scopes }),
  revokeKey: (keyId: string) => call<{ ok: true }>('DELETE', `/api/account/keys/${enc(keyId)}`),

  upload: (assistantId: string, file: File) =>
    call<{ document: DocumentRecord }>('POST', `/api/assistants/${enc(assistantId)}/uploads?filename=${enc(file.name)}`, file, {
      headers: { 'content-type': file.type || 'application/octet-stream' },
    }),
  addSource: (assistantId: string, source: SourceInput) => call<{ document: DocumentRecord }>('POST', `/api/assistants/${enc(assistantId)}/sources`, source),

  startEval: (assistantId: string, cases: Array<{ question: string; expected?: string }>) =>
    call<{ eval: EvalRun }>('POST', `/api/assistants/${enc(assistantId)}/evals`, { cases }),
  getEval: (assistantId: string, evalId: string) => call<{ eval: EvalRun; cases: EvalCase[] }>('GET', `/api/assistants/${enc(assistantId)}/evals/${enc(evalId)}`),

  usageSummary: () => call<{ summary: UsageSummary }>('GET', '/api/v1/account/usage/summary'),
  usageLimits: () => call<{ limits: UsageLimits }>('GET', '/api/v1/account/usage/limits'),
  usageRecent: (limit = 200) => call<{ events: UsageEvent[] }>('GET', `/api/v1/account/usage/recent?limit=${limit}`),

  billing: () => call<{ billing: Billing }>('GET', '/api/v1/account/billing'),
  checkout: (planCode: Exclude<PlanCode, 'free'>) => call<{ url: string }>('POST', '/api/v1/account/billing/checkout', { planCode }),
  portal: () => call<{ url: string }>('POST', '/api/v1/account/billing/portal', {}),

  adminAccounts: (offset = 0) => call<{ accounts: AdminAccount[]; limit: number; offset: number }>('GET', `/api/admin/accounts?limit=50&offset=${offset}`),
  adminPatch: (id: string, patch: { status?: AccountStatus; planCode?: PlanCode; limitOverrideMicros?: number | null }) =>
    call<{ account: AdminAccount }>('PATCH', `/api/admin/accounts/${enc(id)}`, patch),
  adminAudit: (offset = 0) => call<{ entries: AuditEntry[]; limit: number; offset: number }>('GET', `/api/admin/audit?limit=50&offset=${offset}`),
  adminCredit: (id: string, creditMicros: number) => call<{ account: AdminAccount }>('POST', `/api/admin/accounts/${enc(id)}/credit`, { creditMicros }),
};
