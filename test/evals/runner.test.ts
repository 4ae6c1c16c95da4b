import t, { type Test } from 'tap';
import { createAssistant } from '../../src/assistants/index.js';
import { chunkText } from '../../src/documents/chunker.js';
import { createIngestionWorker, publicAddressesOnly } from '../../src/documents/index.js';
import { addSource } from '../../src/documents/service.js';
import { createEval, createEvalRunner, EvalErrorCodes, type EvalDeps } from '../../src/evals/index.js';
import { JUDGE_MARKER } from '../../src/evals/judge.js';
import { priceChat, type EnforcementMode } from '../../src/metering/index.js';
import {
  ChatProviderError,
  type ChatCompletionRequest,
  type ChatProvider,
  type ChatProviders,
  type ChatStreamEvent,
} from '../../src/providers/chat/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { createOwner } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';
import { createTestMeter, setPlan } from '../helpers/metering.js';

type Stream = (request: ChatCompletionRequest, signal: AbortSignal) => AsyncIterable<ChatStreamEvent>;

/** A provider named `openai` (so it is priced) whose behaviour the test scripts; the deployment default. */
function scriptedProviders(stream: Stream): ChatProviders {
  const provider: ChatProvider = { name: 'openai', model: 'gpt-4o-mini', stream };
  return { defaultName: 'openai', get: (name) => (name === 'openai' ? provider : undefined) };
}

const USAGE = { inputTokens: 120, outputTokens: 30 };
const JUDGE_USAGE = { inputTokens: 40, outputTokens: 2 };
const isJudging = (request: ChatCompletionRequest) => request.messages[0]?.content.startsWith(JUDGE_MARKER) === true;

/** Answers with the best passage, or fails as the question asks; as the judge, grades 0.9. */
const quoting: Stream = async function* (request) {
  if (isJudging(request)) {
    yield { type: 'text', text: '0.9' };
    yield { type: 'usage', ...JUDGE_USAGE };
    return;
  }
  if (request.question.includes('unreachable')) throw new ChatProviderError('connection', 'could not connect');
  if (request.question.includes('broken')) {
    yield { type: 'text', text: 'Half an ans' };
    throw new ChatProviderError('interrupted', 'stream broke');
  }
  yield { type: 'text', text: request.passages[0]?.content ?? 'I do not know.' };
  yield { type: 'usage', ...USAGE };
};

/** Never answers: waits until the runner aborts it (shutdown). */
const hanging: Stream = async function* (_request, signal) {
  await new Promise((_resolve, reject) => {
    if (signal.aborted) reject(new ChatProviderError('aborted', 'aborted'));
    signal.addEventListener('abort', () => reject(new ChatProviderError('aborted', 'aborted')), { once: true });
  });
  yield { type: 'text', text: 'never' };
};

async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`gave up waiting: ${what}`);
}

async function setup(t: Test, mode: EnforcementMode = 'enforce') {
  const db = await createTestDatabase(t);
  const { sql } = db;
  const owner = await createOwner(sql);
  await setPlan(sql, owner.accountId, 'pro');
  const assistant = await createAssistant(sql, owner, { name: 'Runner' });
  const { meter } = createTestMeter(sql, { config: { HOSTED_USAGE_ENFORCEMENT: mode } });
  const log = captureLogger().log;
  const ingestion = createIngestionWorker({
    sql,
    meter,
    log,
    process: async (d) => ({ chunks: chunkText((d.source ?? Buffer.alloc(0)).toString()) }),
  });
  const returns = await addSource({ sql, addressPolicy: publicAddressesOnly }, owner, assistant.id, {
    type: 'text',
    name: 'Returns',
    text: 'Returns are free within 60 days of delivery.',
  });
  const hours = await addSource({ sql, addressPolicy: publicAddressesOnly }, owner, assistant.id, {
    type: 'text',
    name: 'Hours',
    text: 'The desk is open from nine to five on weekdays.',
  });
  while (await ingestion.runOnce());
  const deps = (stream: Stream): EvalDeps => ({ sql, log, meter, providers: scriptedProviders(stream) });
  const runners: Array<ReturnType<typeof createEvalRunner>> = [];
  const runner = (stream: Stream) => {
    const r = createEvalRunner(deps(stream), { pollMs: 20, leaseMs: 60_000 });
    runners.push(r);
    return r;
  };
  t.teardown(async () => {
    for (const r of runners) await r.stop();
  });
  const evalRow = async (id: string) =>
    (
      await sql<
        Array<{ status: string; attempts: number; errorCode: string | null; error: string | null }>
      >`select status, attempts, error_code, error from evals where id = ${id}`
    )[0]!;
  const cases = (id: string) =>
    sql<
      Array<{
        ordinal: number;
        answer: string | null;
        outcome: string | null;
        score: number | null;
        costMicros: number;
        reservationId: string | null;
        sources: Array<{ documentId: string }>;
        completedAt: Date | null;
      }>
    >`
      select ordinal, answer, outcome, score, cost_micros, reservation_id, sources, completed_at from eval_cases where eval_id = ${id} order by ordinal`;
  /** Per case: the usage events of its reservation (outcome, cost). */
  const eventsPerCase = async (id: string) =>
    (
      await sql<Array<{ ordinal: number; outcomes: string[] | null }>>`
        select c.ordinal, array_remove(array_agg(e.outcome order by e.created_at), null) as outcomes
        from eval_cases c left join usage_events e on e.reservation_id = c.reservation_id
        where c.eval_id = ${id} group by c.ordinal order by c.ordinal`
    ).map((r) => r.outcomes ?? []);
  const evalEvents = () => sql<
    Array<{ reservationId: string; outcome: string; costMicros: number; model: string | null }>
  >`
    select reservation_id, outcome, cost_micros, model from usage_events where account_id = ${owner.accountId} and kind = 'eval'`;
  const openEvalReservations = async () =>
    (
      await sql<
        [{ n: number }]
      >`select count(*)::int8 as n from usage_reservations where account_id = ${owner.accountId} and kind = 'eval' and status = 'open'`
    )[0].n;
  return {
    sql,
    owner,
    assistant,
    meter,
    deps,
    runner,
    returns,
    hours,
    evalRow,
    cases,
    eventsPerCase,
    evalEvents,
    openEvalReservations,
  };
}

const TWO = [
  { question: 'How many days for returns?', expected: 'Within 60 days of delivery.' },
  { question: 'When is the desk open?', expected: 'From nine to five on weekdays.' },
];

t.test('a run: cases answered in order, scored, each settled once at the priced cost', async (t) => {
  const s = await setup(t);
  const created = await createEval(s.deps(quoting), s.owner, s.assistant.publicId, TWO);
  t.equal(created.status, 'queued');
  t.equal(await s.runner(quoting).runOnce(), true);
  t.equal((await s.evalRow(created.id)).status, 'done');
  const cases = await s.cases(created.id);
  t.equal(cases[0]!.sources[0]!.documentId, s.returns.id);
  t.equal(cases[1]!.sources[0]!.documentId, s.hours.id);
  t.same(
    cases.map((c) => c.score),
    [0.9, 0.9],
    "a hosted model's answers are graded by the same model",
  );
  // The judge's tokens are the case's too: one usage event per case.
  const price = priceChat(
    'gpt-4o-mini',
    USAGE.inputTokens + JUDGE_USAGE.inputTokens,
    USAGE.outputTokens + JUDGE_USAGE.outputTokens,
  );
  t.ok(price > 0);
  t.same(
    cases.map((c) => c.costMicros),
    [price, price],
  );
  t.same(await s.eventsPerCase(created.id), [['settled'], ['settled']]);
  t.equal(await s.openEvalReservations(), 0);
  t.equal(await s.runner(quoting).runOnce(), false, 'nothing left to claim');
});

t.test('a judge that gives no grade leaves the facts score: the right answer above the wrong one', async (t) => {
  const s = await setup(t);
  const created = await createEval(s.deps(quoting), s.owner, s.assistant.id, [
    { question: 'How many days for returns?', expected: 'Within 60 days of delivery.' },
    { question: 'How many days for returns, wrongly?', expected: 'Within 60 days of delivery.' },
  ]);
  const judges: string[] = [];
  const vague: Stream = async function* (request) {
    if (isJudging(request)) {
      judges.push(request.messages[1]!.content);
      yield { type: 'text', text: 'Looks fine to me.' };
      return;
    }
    const wrong = request.question.includes('wrongly');
    yield { type: 'text', text: wrong ? 'Returns are free within 14 days of purchase.' : request.passages[0]!.content };
    yield { type: 'usage', ...USAGE };
  };
  t.equal(await s.runner(vague).runOnce(), true);
  const cases = await s.cases(created.id);
  t.equal(judges.length, 2, 'the judge was asked about each answer');
  t.match(judges[1], /Expected answer: Within 60 days of delivery\.\nAnswer to grade: Returns are free within 14 days/);
  t.equal(cases[0]!.score, 1, 'every expected fact in the quoted sentence');
  t.ok(cases[1]!.score! < 0.2, `another number: a contradiction (${cases[1]!.score})`);
});

t.test(
  "a crashed runner: a live lease is left alone; once it expires the eval resumes and settles the case's open reservation",
  async (t) => {
    const s = await setup(t);
    const created = await createEval(s.deps(quoting), s.owner, s.assistant.id, TWO);
    // The dead runner had claimed the eval and admitted case 0 (its reservation stored on the case) before dying.
    const held = await s.meter.admit({
      accountId: s.owner.accountId,
      kind: 'eval',
      source: 'dashboard',
      audience: 'owner',
      estimateMicros: 500,
      countsAsRequest: false,
      assistantId: s.assistant.id,
    });
    await s.sql`update evals set status = 'running', attempts = 1, lease_token = 'dead-runner', locked_until = now() + interval '1 hour' where id = ${created.id}`;
    await s.sql`update eval_cases set reservation_id = ${held.id} where eval_id = ${created.id} and ordinal = 0`;

    const runner = s.runner(quoting);
    t.equal(await runner.runOnce(), false, 'a running eval with a live lease is not claimed');
    await s.sql`update evals set locked_until = now() - interval '1 second' where id = ${created.id}`;
    t.equal(await runner.runOnce(), true, 'claimed after the lease expired');
    const row = await s.evalRow(created.id);
    t.equal(row.status, 'done');
    t.equal(row.attempts, 2);
    const cases = await s.cases(created.id);
    t.equal(cases[0]!.reservationId, held.id, 'case 0 kept the reservation of the crashed run');
    t.same(
      await s.eventsPerCase(created.id),
      [['settled'], ['settled']],
      'one usage event per case, no second reservation',
    );
    t.equal((await s.evalEvents()).length, 2);
    t.equal(await s.openEvalReservations(), 0);
  },
);

t.test(
  'shutdown mid-case: back to queued with the reservation open; the next runner resumes it, one event per case',
  async (t) => {
    const s = await setup(t);
    const created = await createEval(s.deps(quoting), s.owner, s.assistant.id, TWO);
    const stuck = s.runner(hanging);
    stuck.start();
    await eventually('case 0 admitted', async () => ((await s.cases(created.id))[0]!.reservationId ? true : undefined));
    await stuck.stop();
    const row = await s.evalRow(created.id);
    t.equal(row.status, 'queued', 'requeued by the shutdown');
    t.equal(row.attempts, 0, 'an interrupted claim is not an attempt');
    t.equal(await s.openEvalReservations(), 1, 'the case reservation stays open for the resumed run');
    t.equal((await s.evalEvents()).length, 0);

    t.equal(await s.runner(quoting).runOnce(), true);
    t.equal((await s.evalRow(created.id)).status, 'done');
    t.same(await s.eventsPerCase(created.id), [['settled'], ['settled']]);
    t.equal(await s.openEvalReservations(), 0);
  },
);

t.test(
  'provider failures: could not connect -> released; broke mid-answer -> settled; both model_failure, unscored; the eval still finishes',
  async (t) => {
    const s = await setup(t);
    const created = await createEval(s.deps(quoting), s.owner, s.assistant.id, [
      { question: 'Returns when unreachable?', expected: 'Within 60 days.' },
      { question: 'Returns when broken?', expected: 'Within 60 days.' },
      { question: 'When is the desk open?' },
    ]);
    t.equal(await s.runner(quoting).runOnce(), true);
    t.equal((await s.evalRow(created.id)).status, 'done');
    const cases = await s.cases(created.id);
    t.same(
      cases.map((c) => c.outcome),
      ['model_failure', 'model_failure', 'answered'],
    );
    t.same(
      cases.map((c) => c.score),
      [null, null, null],
      'failures and cases without expected are unscored',
    );
    t.equal(cases[1]!.answer, 'Half an ans', 'the partial answer is kept');
    t.same(await s.eventsPerCase(created.id), [['released'], ['settled'], ['settled']]);
    t.equal(await s.openEvalReservations(), 0);
  },
);

t.test(
  'enforce: the budget runs out mid-run -> failed EVAL_USAGE_REFUSED, finished cases kept, the refused case leaves no event',
  async (t) => {
    const s = await setup(t);
    const created = await createEval(s.deps(quoting), s.owner, s.assistant.id, TWO);
    // Each answer uses the whole output ceiling, so one case costs about its estimate: a budget of one and a half
    // estimates admits the first case and refuses the second.
    const ceiling = s.meter.estimateChat('gpt-4o-mini', 0);
    await setPlan(s.sql, s.owner.accountId, 'pro', Math.floor(ceiling * 1.5));
    const greedy: Stream = async function* (request) {
      yield { type: 'text', text: request.passages[0]?.content ?? 'I do not know.' };
      yield { type: 'usage', inputTokens: 100, outputTokens: s.meter.maxOutputTokens };
    };
    t.equal(await s.runner(greedy).runOnce(), true);
    const row = await s.evalRow(created.id);
    t.equal(row.status, 'failed');
    t.equal(row.errorCode, EvalErrorCodes.USAGE_REFUSED);
    t.match(row.error, /budget/);
    const cases = await s.cases(created.id);
    t.equal(cases[0]!.outcome, 'answered', 'the first case finished');
    t.equal(cases[1]!.completedAt, null, 'the second was refused before its provider call');
    t.same(await s.eventsPerCase(created.id), [['settled'], []]);
    t.equal(await s.openEvalReservations(), 0);
  },
);

t.test('an eval whose runner keeps dying is given up after max_attempts claims', async (t) => {
  const s = await setup(t);
  const created = await createEval(s.deps(quoting), s.owner, s.assistant.id, TWO);
  await s.sql`update evals set status = 'running', attempts = max_attempts, lease_token = 'dead', locked_until = now() - interval '1 second' where id = ${created.id}`;
  t.equal(await s.runner(quoting).runOnce(), true);
  const row = await s.evalRow(created.id);
  t.equal(row.status, 'failed');
  t.equal(row.errorCode, EvalErrorCodes.INTERRUPTED);
  t.equal((await s.evalEvents()).length, 0);
});

t.test(
  'creation refuses an assistant whose provider is not configured (503), and off mode meters nothing',
  async (t) => {
    const s = await setup(t, 'off');
    const none: ChatProviders = { defaultName: 'openai', get: () => undefined };
    await t.rejects(createEval({ ...s.deps(quoting), providers: none }, s.owner, s.assistant.id, TWO), {
      code: EvalErrorCodes.PROVIDER_NOT_CONFIGURED,
      status: 503,
    });
    const created = await createEval(s.deps(quoting), s.owner, s.assistant.id, TWO);
    t.equal(await s.runner(quoting).runOnce(), true);
    t.equal((await s.evalRow(created.id)).status, 'done');
    t.equal((await s.evalEvents()).length, 0, 'off writes no usage');
  },
);
