import fc from 'fast-check';
import { bearer } from '../helpers/identity.js';
import { caseArbitrary, type FuzzCase } from './cases.js';
import { replayLine, sendRaw, type RawAnswer } from './raw.js';
import { call, type World } from './world.js';

export interface FuzzOptions {
  runs: number;
  seed: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** A generous per-request deadline: a hang detector, not a performance assertion. */
  deadlineMs?: number;
  /** The app's BODY_READ_TIMEOUT_MS (a held, truncated body must be answered 408 within it plus the deadline). */
  bodyReadTimeoutMs: number;
  /** Run only this case index (reproducing a failure). */
  only?: number;
  onProgress?: (done: number) => void;
}

export interface FuzzFailure {
  index: number;
  seed: number;
  label: string;
  why: string;
  status: number | undefined;
  body: string;
  replay: string;
}

export interface FuzzReport {
  runs: number;
  seed: number;
  elapsedMs: number;
  byStatus: Record<string, number>;
  byKind: Record<string, number>;
  /** uWS answered a request line it could not parse with its own 505 (documented limit; Parley never saw it). */
  parser505: number;
  /** uWS never finished reading a malformed header block and closed after its idle timeout (documented limit). */
  parserIdleClose: number;
  failures: FuzzFailure[];
  readyAfter: number;
  victimUnchanged: boolean;
  victimDiff?: string;
}

/** uWS's own error pages are HTML; every answer of Parley's is JSON (or the route's declared type). */
const isUwsPage = (a: RawAnswer) => a.body.subarray(0, 4).toString('latin1') === '<h1>';
/** uWS closes a connection whose header block it cannot finish after its idle timeout (10 s, checked every 4 s). */
const UWS_IDLE_CLOSE_MS = 16_000;

/**
 * Per-request deadline: generous (the machine may be loaded, and client and server share one event loop), since it
 * only has to tell a hang from an answer; under uWS's idle close, so a silently dropped request still counts.
 */
export const DEFAULT_DEADLINE_MS = 8000;

export function caseSeed(seed: number, index: number): number {
  return (Math.imul(seed ^ 0x9e3779b9, 2654435761) + Math.imul(index + 1, 40503)) | 0;
}

function deadlineOf(c: FuzzCase, options: FuzzOptions): number {
  const base = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  if (c.kind === 'raw-header') return UWS_IDLE_CLOSE_MS;
  if (c.kind === 'truncated-hold') return options.bodyReadTimeoutMs + base;
  return base;
}

/** What an answer means for a case: undefined when acceptable, else why it is a failure. */
export function judge(c: FuzzCase, a: RawAnswer): { failure?: string; parser?: 'parser505' | 'parserIdleClose' } {
  if (a.timedOut) return { failure: `no answer and no close within the deadline (${a.elapsedMs} ms): a hang` };
  if (a.status !== undefined && a.status >= 500) {
    if ((c.kind === 'raw-line' || c.kind === 'raw-header') && a.status === 505 && isUwsPage(a))
      return { parser: 'parser505' };
    return { failure: `answered ${a.status}` };
  }
  if (a.status === undefined) {
    if (c.kind === 'raw-header') return { parser: 'parserIdleClose' };
    if (c.kind === 'raw-line' || c.kind === 'truncated-end') return {};
    if (c.kind === 'truncated-hold')
      return { failure: 'closed without an answer (408 expected once the body stalled)' };
    return { failure: 'closed without an answer' };
  }
  // The carrier's call webhook is unauthenticated by design and signature-checked: nothing here can sign, so it never
  // answers 2xx to the fuzz.
  if (c.label.includes(' /api/v1/telephony/twilio/voice') && a.status >= 200 && a.status < 300)
    return { failure: `answered ${a.status} to an unsigned carrier webhook` };
  if (c.kind === 'truncated-hold' && a.status !== 408 && a.status < 400)
    return { failure: `answered ${a.status} to a body that never arrived` };
  return {};
}

/** Rows of the victim tenant, by table and key. */
type Snapshot = Map<string, string>;

/** Rows of the victim tenant a request from anyone else must never change. */
async function victimSnapshot(world: World): Promise<Snapshot> {
  const sql = world.app.database.sql;
  const account = world.a.owner.accountId;
  const tables: Record<string, Promise<Array<Record<string, unknown>>>> = {
    accounts: sql`select * from accounts where id = ${account}`,
    hosting: sql`select account_id as id, plan_code, status from hosting_accounts where account_id = ${account}`,
    assistants: sql`select * from assistants where account_id = ${account}`,
    documents: sql`select id, assistant_id, type, name, status, error, chunk_count, source_url, created_at, updated_at from documents where account_id = ${account}`,
    chunks: sql`select d.id, count(*)::int as n, coalesce(sum(length(content)), 0)::int as chars from document_chunks c join documents d on d.id = c.document_id where d.account_id = ${account} group by d.id`,
    conversations: sql`select * from conversations where account_id = ${account}`,
    messages: sql`select m.id, m.conversation_id, m.role, m.content, m.created_at from messages m join conversations c on c.id = m.conversation_id where c.account_id = ${account}`,
    feedback: sql`select f.message_id as id, f.* from message_feedback f join messages m on m.id = f.message_id join conversations c on c.id = m.conversation_id where c.account_id = ${account}`,
    keys: sql`select id, name, scopes, revoked_at from api_keys where account_id = ${account}`,
    voice: sql`select id, state, end_reason, conversation_id, visitor_id from voice_sessions where account_id = ${account}`,
    phoneNumbers: sql`select id, phone_number, assistant_id, carrier_account, auth_token_sealed from phone_numbers where account_id = ${account}`,
  };
  const snapshot: Snapshot = new Map();
  for (const [table, rows] of Object.entries(tables))
    for (const row of await rows) snapshot.set(`${table}:${String(row['id'])}`, JSON.stringify(row));
  return snapshot;
}

/**
 * Differences that are not allowed: a row of the victim changed or vanished, or a row appeared that is not a widget
 * visitor's new conversation with the victim's public assistant (the widget is public: that is its purpose).
 */
function victimChanges(world: World, before: Snapshot, after: Snapshot): string[] {
  const changes: string[] = [];
  for (const [key, row] of before) {
    const now = after.get(key);
    if (now === undefined) changes.push(`${key} vanished: ${row}`);
    else if (now !== row) changes.push(`${key} changed:\n  before ${row}\n  after  ${now}`);
  }
  const visitorConversations = new Set<string>();
  for (const [key, row] of after) {
    if (!key.startsWith('conversations:') || before.has(key)) continue;
    const c = JSON.parse(row) as { id: string; visitorId: string | null; source: string };
    if (c.visitorId === world.b.visitorId && c.source !== 'api') visitorConversations.add(c.id);
  }
  for (const [key, row] of after) {
    if (before.has(key)) continue;
    const r = JSON.parse(row) as { id: string; conversationId?: string; visitorId?: string | null; messageId?: string };
    const table = key.slice(0, key.indexOf(':'));
    const allowed =
      (table === 'conversations' && visitorConversations.has(r.id)) ||
      (table === 'messages' && visitorConversations.has(r.conversationId ?? '')) ||
      (table === 'voice' && r.visitorId === world.b.visitorId) ||
      (table === 'feedback' &&
        [...after.entries()].some(
          ([k, m]) =>
            k === `messages:${r.messageId}` &&
            visitorConversations.has((JSON.parse(m) as { conversationId: string }).conversationId),
        ));
    if (!allowed) changes.push(`${key} appeared: ${row}`);
  }
  return changes;
}

/** Lets the victim's background work finish (ingestion, eval, its voice call) so only requests could change it. */
async function settleVictim(world: World): Promise<void> {
  const { app, a } = world;
  await call(app, 'POST', `/api/v1/voice/sessions/${a.ids.voiceSession}/end`, {}, bearer(a.owner.secret));
  const sql = app.database.sql;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [busy] = await sql`select
      (select count(*)::int from documents where account_id = ${a.owner.accountId} and status in ('pending', 'processing')) +
      (select count(*)::int from evals e join assistants s on s.id = e.assistant_id where s.account_id = ${a.owner.accountId} and e.status in ('queued', 'running')) +
      (select count(*)::int from voice_sessions where account_id = ${a.owner.accountId} and state not in ('ended', 'lost')) as n`;
    if (busy!.n === 0) return;
    if (Date.now() > deadline) throw new Error("the victim tenant's background work did not settle within 30 s");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Runs `runs` generated cases (each from its own seed derived from `seed` and its index, so any one replays alone)
 * against the world's app, then checks the server is ready and the victim tenant's data is unchanged.
 */
export async function runFuzz(world: World, options: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const routes = world.app.app.routes;
  const arbitrary = caseArbitrary(world, routes);
  await settleVictim(world);
  const before = await victimSnapshot(world);
  const report: FuzzReport = {
    runs: 0,
    seed: options.seed,
    elapsedMs: 0,
    byStatus: {},
    byKind: {},
    parser505: 0,
    parserIdleClose: 0,
    failures: [],
    readyAfter: 0,
    victimUnchanged: false,
  };
  const indices = options.only !== undefined ? [options.only] : Array.from({ length: options.runs }, (_, i) => i);
  const slow: Array<Promise<void>> = [];

  const runOne = async (index: number, c: FuzzCase) => {
    const answer = await sendRaw(world.app.port, { bytes: c.bytes, after: c.after }, deadlineOf(c, options));
    report.runs++;
    report.byKind[c.kind] = (report.byKind[c.kind] ?? 0) + 1;
    const statusKey = answer.status === undefined ? (answer.timedOut ? 'hang' : 'closed') : String(answer.status);
    report.byStatus[statusKey] = (report.byStatus[statusKey] ?? 0) + 1;
    const verdict = judge(c, answer);
    if (verdict.parser) report[verdict.parser]++;
    if (verdict.failure) {
      report.failures.push({
        index,
        seed: options.seed,
        label: c.label,
        why: verdict.failure,
        status: answer.status,
        body: answer.body.toString('utf8').slice(0, 400),
        replay: replayLine(c.bytes),
      });
    }
    options.onProgress?.(report.runs);
  };

  // Generated before any is sent: the client shares the server's event loop, and generating while requests are in
  // flight would be counted against their deadlines.
  const cases = indices.map((index) => fc.sample(arbitrary, { seed: caseSeed(options.seed, index), numRuns: 1 })[0]!);
  let next = 0;
  const worker = async () => {
    while (next < indices.length) {
      const i = next++;
      const index = indices[i]!;
      const c = cases[i]!;
      // Cases uWS only closes after its idle timeout wait outside the pool (they hold a socket, not a worker).
      if (c.kind === 'raw-header' || c.kind === 'truncated-hold') slow.push(runOne(index, c));
      else await runOne(index, c);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
  await Promise.all(slow);

  report.readyAfter = (await fetch(`${world.app.url}/readyz`)).status;
  await settleVictim(world);
  const after = await victimSnapshot(world);
  const changes = victimChanges(world, before, after);
  report.victimUnchanged = changes.length === 0;
  if (!report.victimUnchanged) report.victimDiff = changes.slice(0, 10).join('\n');
  report.elapsedMs = Date.now() - started;
  return report;
}

/** A failure as a developer reproduces it: the replay bytes and the command that regenerates the case. */
export function describeFailure(f: FuzzFailure): string {
  return [
    `case ${f.index} (seed ${f.seed}): ${f.label}`,
    `  ${f.why}${f.status !== undefined ? `; body: ${f.body}` : ''}`,
    `  regenerate: npm run fuzz -- --seed ${f.seed} --only ${f.index}`,
    `  raw bytes against a running server: ${f.replay}`,
  ].join('\n');
}

export function summarize(r: FuzzReport): string {
  const statuses = Object.entries(r.byStatus)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}:${v}`)
    .join(' ');
  const kinds = Object.entries(r.byKind)
    .map(([k, v]) => `${k}:${v}`)
    .join(' ');
  return [
    `fuzz: ${r.runs} requests, seed ${r.seed}, ${(r.elapsedMs / 1000).toFixed(1)} s`,
    `  statuses: ${statuses}`,
    `  kinds: ${kinds}`,
    `  uWS parser answers (documented limits): 505 to malformed request lines ${r.parser505}, idle close of unreadable header blocks ${r.parserIdleClose}`,
    `  failures (5xx, hangs, missing answers): ${r.failures.length}; /readyz after: ${r.readyAfter}; victim data unchanged: ${r.victimUnchanged}`,
  ].join('\n');
}
