import t, { type Test } from 'tap';
import type { Sql } from '../../src/db/index.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import { balanceOf, setPlan } from '../helpers/metering.js';

interface EvalView {
  id: string;
  assistantId: string;
  status: string;
  caseCount: number;
  completedCount: number;
  averageScore: number | null;
  costMicros: number;
  error: { code: string; message: string } | null;
}
interface CaseView {
  index: number;
  status: string;
  question: string;
  expected: string | null;
  answer: string | null;
  sources: Array<{ documentId: string; name: string; snippet: string; score: number }>;
  outcome: string | null;
  score: number | null;
  model: string | null;
}

const RETURNS =
  'Returns are free within 60 days of delivery. Refunds reach the original card within five business days.';
const HOURS = 'The support desk is open from nine to five on weekdays. On Saturdays the desk opens at ten.';

/** Polls until `check` answers a value; throws after ~20 s instead of hanging (no timing is asserted). */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting: ${what}`);
}

/** One app in the given metering mode, an owner with an assistant holding two ready text documents, and a stranger. */
async function setup(t: Test, mode: 'enforce' | 'shadow') {
  const app = await startTestApp(t, {
    env: { HOSTED_USAGE_ENFORCEMENT: mode },
    knowledge: { documents: { pollMs: 50 } },
  });
  const { url, deps } = app;
  const owner = await createOwner(deps.sql);
  const other = await createOwner(deps.sql);
  const cookie = await login(url, owner.email, owner.password);
  const otherCookie = await login(url, other.email, other.password);
  const res = await fetch(`${url}/api/v1/assistants`, {
    method: 'POST',
    headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Help desk' }),
  });
  t.equal(res.status, 201, 'assistant created');
  const assistant = ((await res.json()) as { assistant: { id: string; publicId: string } }).assistant;
  const addText = async (name: string, text: string) => {
    const added = await fetch(`${url}/api/assistants/${assistant.publicId}/sources`, {
      method: 'POST',
      headers: dashboardHeaders(url, cookie),
      body: JSON.stringify({ type: 'text', name, text }),
    });
    t.equal(added.status, 201, `${name} added`);
    const doc = ((await added.json()) as { document: { id: string } }).document;
    await eventually(`${name} ready`, async () => {
      const [row] = await deps.sql<Array<{ status: string }>>`select status from documents where id = ${doc.id}`;
      if (row?.status === 'failed') throw new Error(`${name} failed`);
      return row?.status === 'ready' ? true : undefined;
    });
    return doc.id;
  };
  const returnsDoc = await addText('Returns policy', RETURNS);
  const hoursDoc = await addText('Opening hours', HOURS);
  const post = (body: unknown, options: { who?: string | null; id?: string } = {}) =>
    fetch(`${url}/api/assistants/${options.id ?? assistant.publicId}/evals`, {
      method: 'POST',
      headers:
        options.who === null
          ? { 'content-type': 'application/json', origin: url }
          : dashboardHeaders(url, options.who ?? cookie),
      body: JSON.stringify(body),
    });
  const get = (evalId: string, options: { who?: string | null; id?: string } = {}) =>
    fetch(`${url}/api/assistants/${options.id ?? assistant.publicId}/evals/${evalId}`, {
      headers: options.who === null ? {} : dashboardHeaders(url, options.who ?? cookie),
    });
  const waitDone = (evalId: string) =>
    eventually(`eval ${evalId} finished`, async () => {
      const body = (await (await get(evalId)).json()) as { eval: EvalView; cases: CaseView[] };
      return body.eval.status === 'done' || body.eval.status === 'failed' ? body : undefined;
    });
  return { ...app, owner, other, cookie, otherCookie, assistant, returnsDoc, hoursDoc, post, get, waitDone };
}

/** The account's eval usage events, and per case of `evalId` how many usage events its reservation left. */
async function evalUsage(sql: Sql, accountId: string, evalId: string) {
  const events = await sql<
    Array<{
      kind: string;
      source: string;
      outcome: string;
      mode: string;
      assistantId: string;
      model: string | null;
      costMicros: number;
    }>
  >`
    select kind, source, outcome, mode, assistant_id, model, cost_micros from usage_events where account_id = ${accountId} and kind = 'eval' order by created_at, id`;
  const perCase = await sql<Array<{ ordinal: number; events: number }>>`
    select c.ordinal, count(e.id)::int8 as events
    from eval_cases c left join usage_events e on e.reservation_id = c.reservation_id
    where c.eval_id = ${evalId} group by c.ordinal order by c.ordinal`;
  const [open] = await sql<
    [{ n: number }]
  >`select count(*)::int8 as n from usage_reservations where account_id = ${accountId} and kind = 'eval' and status = 'open'`;
  return { events, perCase: perCase.map((r) => r.events), open: open.n };
}

const CASES = [
  { question: 'How many days do I have to return an item?', expected: 'Returns are free within 60 days of delivery.' },
  { question: 'When is the support desk open on weekdays?', expected: 'From nine to five on weekdays.' },
  { question: 'When does the desk open on Saturdays?' },
];

t.test(
  'enforce mode: guards, plan_limit on free, 202 on pro, answers grounded in the right documents, one eval usage event per case',
  async (t) => {
    const s = await setup(t, 'enforce');

    t.test('401 without a session', async (t) => {
      const res = await s.post({ cases: CASES }, { who: null });
      t.equal(res.status, 401);
      const got = await s.get('eval_whatever', { who: null });
      t.equal(got.status, 401);
    });

    t.test("404 for another account's assistant (either id)", async (t) => {
      for (const id of [s.assistant.publicId, s.assistant.id]) {
        const res = await s.post({ cases: CASES }, { who: s.otherCookie, id });
        t.equal(res.status, 404, `POST with ${id}`);
        t.equal(((await res.json()) as { code: string }).code, 'ASSISTANT_NOT_FOUND');
      }
      t.equal((await s.deps.sql`select 1 from evals`).length, 0, 'nothing queued');
    });

    t.test('400 for bad bodies', async (t) => {
      const bad: Array<[string, unknown]> = [
        ['no cases key', {}],
        ['empty cases', { cases: [] }],
        ['51 cases', { cases: Array.from({ length: 51 }, (_, i) => ({ question: `Question ${i}?` })) }],
        ['blank question', { cases: [{ question: '   ' }] }],
        ['question over 4000 chars', { cases: [{ question: 'q'.repeat(4001) }] }],
        ['expected over 4000 chars', { cases: [{ question: 'Why?', expected: 'e'.repeat(4001) }] }],
        ['question not a string', { cases: [{ question: 42 }] }],
        ['unknown case field', { cases: [{ question: 'Why?', answer: 'Because.' }] }],
        ['unknown top-level field', { cases: [{ question: 'Why?' }], mode: 'fast' }],
      ];
      for (const [label, body] of bad) {
        const res = await s.post(body);
        t.equal(res.status, 400, label);
        await res.arrayBuffer();
      }
      t.equal((await s.deps.sql`select 1 from evals`).length, 0, 'nothing queued');
    });

    t.test('403 plan_limit on the free plan, nothing queued', async (t) => {
      const res = await s.post({ cases: CASES });
      t.equal(res.status, 403);
      const body = (await res.json()) as { code: string; reason: string; details: { planCode: string } };
      t.equal(body.code, 'PLAN_LIMIT_EVALS');
      t.equal(body.reason, 'plan_limit');
      t.equal(body.details.planCode, 'free');
      t.equal((await s.deps.sql`select 1 from evals`).length, 0);
    });

    t.test('starter has no evals either', async (t) => {
      await setPlan(s.deps.sql, s.owner.accountId, 'starter');
      const res = await s.post({ cases: CASES });
      t.equal(res.status, 403);
      t.equal(((await res.json()) as { reason: string }).reason, 'plan_limit');
    });

    t.test('pro: 202, then done with grounded, scored answers and exactly one eval usage event per case', async (t) => {
      await setPlan(s.deps.sql, s.owner.accountId, 'pro');
      const before = await balanceOf(s.deps.sql, s.owner.accountId);
      const res = await s.post({ cases: CASES });
      t.equal(res.status, 202);
      const created = ((await res.json()) as { eval: EvalView }).eval;
      t.match(created.id, /^eval_/);
      t.equal(created.assistantId, s.assistant.id, 'the internal assistant id');
      t.equal(created.caseCount, 3);
      t.ok(['queued', 'running', 'done'].includes(created.status), `status ${created.status}`);

      const { eval: done, cases } = await s.waitDone(created.id);
      t.equal(done.status, 'done', `done (${JSON.stringify(done.error)})`);
      t.equal(done.completedCount, 3);
      t.equal(done.error, null);
      t.equal(cases.length, 3);
      t.same(
        cases.map((c) => c.index),
        [0, 1, 2],
      );
      for (const c of cases) {
        t.equal(c.status, 'done');
        t.equal(c.outcome, 'answered', `case ${c.index} answered`);
        t.ok(c.answer && c.answer.length > 0, `case ${c.index} has an answer`);
        t.equal(c.model, 'local-extractive');
      }
      t.equal(cases[0]!.sources[0]?.documentId, s.returnsDoc, 'the returns question is grounded in the returns policy');
      t.equal(cases[0]!.sources[0]?.name, 'Returns policy');
      t.equal(cases[1]!.sources[0]?.documentId, s.hoursDoc, 'the hours question is grounded in the opening hours');
      t.equal(cases[2]!.sources[0]?.documentId, s.hoursDoc);
      t.match(cases[0]!.answer, /60 days/);
      t.ok(cases[0]!.score! > 0 && cases[0]!.score! <= 1, `case 0 scored (${cases[0]!.score})`);
      t.ok(cases[1]!.score! > 0 && cases[1]!.score! <= 1, `case 1 scored (${cases[1]!.score})`);
      t.equal(cases[2]!.score, null, 'no expected answer, no score');
      t.equal(cases[2]!.expected, null);
      t.ok(
        done.averageScore !== null && Math.abs(done.averageScore - (cases[0]!.score! + cases[1]!.score!) / 2) < 1e-3,
        'average of the scored cases',
      );

      const usage = await evalUsage(s.deps.sql, s.owner.accountId, created.id);
      t.same(usage.perCase, [1, 1, 1], 'each case left exactly one usage event');
      t.equal(usage.events.length, 3, 'three eval events in all');
      for (const e of usage.events) {
        t.match(e, {
          kind: 'eval',
          source: 'dashboard',
          outcome: 'settled',
          mode: 'enforce',
          assistantId: s.assistant.id,
          model: 'local-extractive',
        });
      }
      t.equal(usage.open, 0, 'no reservation left open');
      const after = await balanceOf(s.deps.sql, s.owner.accountId);
      t.equal(after!.requestCount, before!.requestCount, 'evals are not requests');
      t.equal(after!.reservedMicros, 0);

      // Either id reads it; another account and an unknown eval are 404.
      t.equal((await s.get(created.id, { id: s.assistant.id })).status, 200, 'by internal assistant id');
      const foreign = await s.get(created.id, { who: s.otherCookie });
      t.equal(foreign.status, 404);
      t.equal(((await foreign.json()) as { code: string }).code, 'ASSISTANT_NOT_FOUND');
      const unknown = await s.get('eval_doesnotexist');
      t.equal(unknown.status, 404);
      t.equal(((await unknown.json()) as { code: string }).code, 'EVAL_NOT_FOUND');

      // Reading is for plans with evals only too: after a downgrade, 403 plan_limit.
      await setPlan(s.deps.sql, s.owner.accountId, 'free');
      const downgraded = await s.get(created.id);
      t.equal(downgraded.status, 403);
      t.match(await downgraded.json(), { code: 'PLAN_LIMIT_EVALS', reason: 'plan_limit' });
    });
  },
);

t.test('shadow mode: the free plan may run evals, and every case is recorded as an eval usage event', async (t) => {
  const s = await setup(t, 'shadow');
  const res = await s.post({ cases: CASES.slice(0, 2) });
  t.equal(res.status, 202, 'shadow never refuses');
  const created = ((await res.json()) as { eval: EvalView }).eval;
  const { eval: done, cases } = await s.waitDone(created.id);
  t.equal(done.status, 'done');
  t.equal(cases[0]!.sources[0]?.documentId, s.returnsDoc);
  const usage = await evalUsage(s.deps.sql, s.owner.accountId, created.id);
  t.same(usage.perCase, [1, 1]);
  t.equal(usage.events.length, 2);
  for (const e of usage.events) t.match(e, { kind: 'eval', source: 'dashboard', outcome: 'settled', mode: 'shadow' });
  t.equal(usage.open, 0);
});

t.test('the eval routes are dashboard-only: absent from the v1 document', async (t) => {
  const s = await startTestApp(t);
  const paths = Object.keys((s.app.openapi as { paths: Record<string, unknown> }).paths);
  t.notOk(paths.some((p) => p.includes('/evals')));
  const routes = s.app.routes.filter((r) => r.path.includes('/evals'));
  t.equal(routes.length, 2);
  for (const r of routes) {
    t.equal(r.openapi.hidden, true);
    t.equal(r.auth, 'session');
  }
});
