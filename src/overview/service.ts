import type { OwnerPrincipal } from '../auth/principal.js';
import { decodeCursor, getOwnedAssistant, pageOf } from '../assistants/index.js';
import type { Sql } from '../db/index.js';
import { maskCallerNumber } from '../conversations/index.js';
import * as q from './queries.js';

const DAY_MS = 86_400_000;
const ratio = (part: number, whole: number) => (whole === 0 ? null : Number(Math.min(1, part / whole).toFixed(4)));
const rounded = (v: number | null) => (v === null ? null : Math.round(Number(v)));

/** The owner's day across every assistant: calls, chats, answers, latency, spend and how calls ended. */
export async function overviewOf(
  sql: Sql,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  date: string | undefined,
  now = new Date(),
) {
  const day = date ?? now.toISOString().slice(0, 10);
  const from = new Date(`${day}T00:00:00Z`);
  const to = new Date(from.getTime() + DAY_MS);
  const { accountId } = owner;
  const [totals, kinds, latency, reasons, assistants] = await Promise.all([
    q.dayTotals(sql, accountId, from, to),
    q.spendByKind(sql, accountId, from, to),
    q.turnLatency(sql, accountId, from, to),
    q.endReasons(sql, accountId, from, to),
    q.byAssistant(sql, accountId, from, to),
  ]);
  return {
    date: day,
    from: from.toISOString(),
    to: to.toISOString(),
    calls: totals.calls,
    chats: totals.chats,
    questions: totals.questions,
    answered: totals.answered,
    noAnswer: totals.noAnswer,
    modelFailures: totals.modelFailures,
    answeredRate: ratio(
      totals.answered,
      Math.max(totals.questions, totals.answered + totals.noAnswer + totals.modelFailures),
    ),
    billableSeconds: totals.billableSeconds,
    turnLatency: { turns: latency.turns, p50Ms: rounded(latency.p50Ms), p95Ms: rounded(latency.p95Ms) },
    spend: { costMicros: totals.spendMicros, byKind: kinds },
    endReasons: reasons.map((r) => ({ reason: r.reason ?? 'hangup', count: r.count })),
    assistants: assistants.map((a) => ({
      assistantId: a.assistantId,
      publicId: a.publicId,
      name: a.name,
      calls: a.calls,
      chats: a.chats,
      questions: a.questions,
      answeredRate: ratio(a.answered, a.questions),
      spendMicros: a.spendMicros,
    })),
  };
}

export interface CallQuery {
  limit: number;
  cursor?: string | undefined;
  assistantId?: string | undefined;
  source?: string | undefined;
  transport?: string | undefined;
  phoneNumber?: string | undefined;
  endReason?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/** Every call of the account, newest first, a page at a time, each with its cost and median turn latency. */
export async function listCallLog(sql: Sql, owner: Pick<OwnerPrincipal, 'accountId'>, query: CallQuery) {
  const after = decodeCursor(query.cursor);
  const assistant =
    query.assistantId !== undefined ? await getOwnedAssistant(sql, owner, query.assistantId) : undefined;
  const rows = await q.callPage(
    sql,
    {
      accountId: owner.accountId,
      assistantId: assistant?.id,
      source: query.source,
      transport: query.transport,
      phoneDigits: query.phoneNumber?.replace(/[^0-9]/g, ''),
      endReason: query.endReason,
      from: query.from,
      to: query.to,
    },
    after,
    query.limit,
  );
  const page = pageOf(rows, query.limit);
  return { calls: page.items.map(presentCall), nextCursor: page.nextCursor };
}

function presentCall(r: q.CallRow) {
  const ended = r.state !== 'active';
  const started = r.startedAt ?? r.createdAt;
  return {
    sessionId: r.id,
    assistantId: r.assistantId,
    assistantPublicId: r.assistantPublicId,
    assistantName: r.assistantName,
    conversationId: r.conversationId,
    source: r.source,
    transport: r.transport,
    callerNumber: r.callerNumber === null ? null : maskCallerNumber(r.callerNumber),
    state: r.state as 'active' | 'ended' | 'lost',
    endReason: ended ? (r.endReason ?? 'hangup') : null,
    endedBy: r.endedBy,
    startedAt: started.toISOString(),
    endedAt: r.endedAt?.toISOString() ?? null,
    durationSeconds:
      r.endedAt === null ? null : Math.max(0, Math.round((r.endedAt.getTime() - started.getTime()) / 1000)),
    billableSeconds: r.billableSeconds,
    costMicros: r.costMicros,
    turns: r.turns,
    latencyP50Ms: rounded(r.latencyP50Ms),
    timelineUrl: `/api/v1/voice/sessions/${r.id}/timeline`,
  };
}
