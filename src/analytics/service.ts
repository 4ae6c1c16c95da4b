import type { OwnerPrincipal } from '../auth/principal.js';
import { getOwnedAssistant } from '../assistants/index.js';
import type { Sql } from '../db/index.js';
import { isStorableDate } from '../http/index.js';
import { analyticsErrors } from './errors.js';
import * as q from './queries.js';

const DAY_MS = 86_400_000;
export const DEFAULT_RANGE_DAYS = 30;
export const MAX_RANGE_DAYS = 366;

/** [from, to): `to` defaults to now, `from` to 30 days before `to`; a date without time is its UTC midnight. */
export function resolveRange(
  fromText: string | undefined,
  toText: string | undefined,
  now = new Date(),
): { from: Date; to: Date } {
  const parse = (text: string) => new Date(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  const to = toText !== undefined ? parse(toText) : now;
  const from = fromText !== undefined ? parse(fromText) : new Date(to.getTime() - DEFAULT_RANGE_DAYS * DAY_MS);
  if (!isStorableDate(from) || !isStorableDate(to))
    throw analyticsErrors.badRange('from and to must be ISO dates between years 0001 and 9999.');
  if (from >= to) throw analyticsErrors.badRange('from must be before to.');
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS)
    throw analyticsErrors.badRange(`The range may span at most ${MAX_RANGE_DAYS} days.`);
  return { from, to };
}

const ratio = (part: number, whole: number) => (whole === 0 ? null : Number((part / whole).toFixed(4)));

export async function assistantAnalytics(
  sql: Sql,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  input: { assistantId: string; from?: string | undefined; to?: string | undefined },
) {
  const assistant = await getOwnedAssistant(sql, owner, input.assistantId);
  const { from, to } = resolveRange(input.from, input.to);
  const [t, days, unanswered, analysedDays] = await Promise.all([
    q.totals(sql, assistant.id, from, to),
    q.daily(sql, assistant.id, from, to),
    q.topUnanswered(sql, assistant.id, from, to, 10),
    q.analysisDaily(sql, assistant.id, from, to),
  ]);
  const analysedOn = new Map(analysedDays.map((d) => [d.day, d]));
  const none = { analysed: 0, passed: 0, failed: 0, positive: 0, neutral: 0, negative: 0 };
  const sum = analysedDays.reduce(
    (acc, d) => ({
      analysed: acc.analysed + d.analysed,
      passed: acc.passed + d.passed,
      failed: acc.failed + d.failed,
      positive: acc.positive + d.positive,
      neutral: acc.neutral + d.neutral,
      negative: acc.negative + d.negative,
    }),
    none,
  );
  const analysisOf = (d: Omit<q.AnalysisDayRow, 'day'>) => ({
    analysed: d.analysed,
    passed: d.passed,
    failed: d.failed,
    successRate: ratio(d.passed, d.passed + d.failed),
    sentiment: { positive: d.positive, neutral: d.neutral, negative: d.negative },
  });
  const answers = t.answered + t.noAnswer + t.modelFailures;
  return {
    metrics: {
      from: from.toISOString(),
      to: to.toISOString(),
      conversations: t.conversations,
      messages: t.messages,
      answered: t.answered,
      noAnswer: t.noAnswer,
      modelFailures: t.modelFailures,
      answeredRate: ratio(t.answered, answers),
      noAnswerRate: ratio(t.noAnswer, answers),
      feedback: {
        positive: t.positive,
        negative: t.negative,
        positiveRatio: ratio(t.positive, t.positive + t.negative),
      },
      analysis: analysisOf(sum),
    },
    daily: days.map((d) => ({
      date: d.day,
      conversations: d.conversations,
      messages: d.messages,
      answered: d.answered,
      noAnswer: d.noAnswer,
      analysis: analysisOf(analysedOn.get(d.day) ?? none),
    })),
    topUnanswered: unanswered.map((u) => ({
      question: u.question,
      count: u.count,
      lastAskedAt: u.lastAskedAt.toISOString(),
    })),
  };
}
