/**
 * Usage scenario (`npm run bench -- --only=usage`): the owner dashboard's usage routes on an account with
 * 1,000,000 usage events in its current period and 20,000 conversations. The seed is a handful of SQL statements
 * (generate_series), not a million inserts from JS; the per-period totals the usage_events trigger keeps are filled
 * by the same aggregate migration 0007 backfills with. Then every route is called in interleaved rounds over one
 * keep-alive connection (sequential: latency, not throughput) and reported as p50/p95.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import postgres from 'postgres';
import { ROOT, startSimulator, type Child } from '../harness/children.js';
import { startParley, type ParleyBuild, type ParleyFixture } from '../harness/parley.js';
import { percentile, round } from '../harness/stats.js';

export interface UsageOptions {
  events: number;
  conversations: number;
  /** Requests per route (after 20 warm-up requests each), spread over interleaved rounds. */
  requests: number;
  serverCpus: number[] | undefined;
  simulatorCpus: number[] | undefined;
  parley: { build: ParleyBuild; fixture: ParleyFixture } | undefined;
  parleyUnavailable?: string;
  log: (line: string) => void;
}

export interface UsageRouteRun {
  path: string;
  kind: 'summary' | 'report' | 'floor';
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  requests: number;
}

export interface UsageResult {
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  events?: number;
  conversations?: number;
  seedSeconds?: number;
  /** The daily route's days summed, against the period total of the summary: equal to the micro, or not. */
  dailyCheck?: { dailyTotalMicros: number; periodTotalMicros: number; equal: boolean };
  runs: UsageRouteRun[];
}

const ROUTES: Array<{ path: string; kind: UsageRouteRun['kind'] }> = [
  // No work at all, on the same connection in the same loop: what the machine itself adds at that moment.
  { path: '/healthz', kind: 'floor' },
  { path: '/api/v1/account/usage/summary', kind: 'summary' },
  { path: '/api/v1/account/usage/limits', kind: 'report' },
  { path: '/api/v1/account/usage/by-assistant', kind: 'report' },
  { path: '/api/v1/account/usage/recent?limit=50', kind: 'report' },
  { path: '/api/v1/account/usage/daily', kind: 'report' },
  { path: '/api/v1/account/usage/forecast', kind: 'report' },
];

function cli(build: ParleyBuild, env: Record<string, string>, args: string[]): Record<string, unknown> {
  const nodeArgs = build.cli.endsWith('.ts') ? ['--import', 'tsx', build.cli] : [build.cli];
  const out = spawnSync(process.execPath, [...nodeArgs, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`cli ${args[0]} failed: ${out.stderr.slice(0, 400)}`);
  return JSON.parse(out.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

export async function runUsageScenario(options: UsageOptions): Promise<UsageResult> {
  if (options.parley === undefined)
    return { status: 'skipped', reason: options.parleyUnavailable ?? 'Parley could not be prepared', runs: [] };
  const { build, fixture } = options.parley;
  const databaseUrl = fixture.env['DATABASE_URL'];
  if (databaseUrl === undefined)
    return { status: 'skipped', reason: 'needs PostgreSQL (--database=embedded cannot hold the seed)', runs: [] };

  const email = `usage-${randomBytes(4).toString('hex')}@bench.local`;
  const password = `usage-${randomBytes(12).toString('hex')}`;
  const cliEnv = { ...fixture.env, LOG_LEVEL: 'warn' };
  const user = cli(build, cliEnv, ['user:create', '--email', email, '--password', password, '--name', 'usage-bench']);
  const accountId = String(user['accountId']);
  const key = String(
    cli(build, cliEnv, [
      'key:create',
      '--email',
      email,
      '--scopes',
      'assistants:write,assistants:read',
      '--name',
      'usage-bench',
    ])['secret'],
  );

  const children: Child[] = [];
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  try {
    const simulator = await startSimulator(options.simulatorCpus);
    children.push(simulator);
    const parley = await startParley(build, fixture, simulator.info, options.serverCpus);
    children.push(parley);
    const url = parley.info;

    const assistants: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${url}/api/v1/assistants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `usage-bench-${i}`, instructions: 'Answer briefly.' }),
      });
      const body = (await res.json()) as { assistant?: { id: string } };
      if (!body.assistant)
        throw new Error(`could not create an assistant: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      assistants.push(body.assistant.id);
    }

    const login = await fetch(`${url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: url },
      body: JSON.stringify({ email, password }),
    });
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    if (login.status !== 200 || cookie === '')
      throw new Error(`dashboard login failed: ${login.status} ${(await login.text()).slice(0, 200)}`);
    const get = (path: string) => fetch(`${url}${path}`, { headers: { cookie } });
    // The current period as Parley computes it; its balance row is made here when no metered request made it yet.
    const first = await get(ROUTES[1]!.path);
    if (first.status !== 200)
      throw new Error(`usage summary answered ${first.status}: ${(await first.text()).slice(0, 200)}`);
    const { summary } = (await first.json()) as { summary: { periodStart: string; periodEnd: string } };
    await sql`insert into usage_balances (account_id, period_start, period_end)
              values (${accountId}, ${new Date(summary.periodStart)}, ${new Date(summary.periodEnd)}) on conflict do nothing`;

    options.log(`usage: seeding ${options.events} usage events and ${options.conversations} conversations...`);
    const seedStarted = performance.now();
    const [balance] = await sql<Array<{ period_start: Date; period_end: Date }>>`
      select period_start, period_end from usage_balances where account_id = ${accountId} order by period_start desc limit 1`;
    if (!balance) throw new Error('no usage balance row for the bench account');
    const spanSeconds = Math.max(60, Math.floor((Date.now() - balance.period_start.getTime()) / 1000));
    await sql.begin(async (tx) => {
      // Triggers off for the bulk load (superuser, this session only): the totals are filled below in one statement.
      await tx`set local session_replication_role = replica`;
      await tx`
        insert into usage_reservations (id, account_id, period_start, kind, source, assistant_id, reserved_micros, counts_as_request, status, created_at, closed_at)
        select 'ures_bench_' || g, ${accountId}, ${balance.period_start}, 'chat', case when g % 5 = 0 then 'widget' else 'api' end,
               (${assistants} :: text[])[1 + g % 3], 2000, true, case when g % 50 = 0 then 'released' else 'settled' end,
               ${balance.period_start}::timestamptz + (g % ${spanSeconds}) * interval '1 second',
               ${balance.period_start}::timestamptz + (g % ${spanSeconds}) * interval '1 second'
        from generate_series(1, ${options.events}) g`;
      await tx`
        insert into usage_events (id, reservation_id, account_id, period_start, kind, source, assistant_id, mode, outcome, model,
                                  input_tokens, output_tokens, units, cost_micros, reserved_micros, created_at)
        select 'uev_bench_' || g, 'ures_bench_' || g, ${accountId}, ${balance.period_start}, 'chat', case when g % 5 = 0 then 'widget' else 'api' end,
               (${assistants} :: text[])[1 + g % 3], 'shadow', case when g % 50 = 0 then 'released' else 'settled' end, 'local',
               case when g % 50 = 0 then 0 else 200 + g % 300 end, case when g % 50 = 0 then 0 else 80 + g % 200 end, 0,
               case when g % 50 = 0 then 0 else 900 + g % 700 end, 2000,
               ${balance.period_start}::timestamptz + (g % ${spanSeconds}) * interval '1 second'
        from generate_series(1, ${options.events}) g`;
      await tx`
        insert into usage_period_assistant_totals (account_id, period_start, assistant_key, cost_micros, request_count, input_tokens, output_tokens, events)
        select e.account_id, e.period_start, coalesce(e.assistant_id, ''), sum(e.cost_micros),
               count(*) filter (where r.counts_as_request and e.outcome <> 'released'), sum(e.input_tokens), sum(e.output_tokens), count(*)
        from usage_events e join usage_reservations r on r.id = e.reservation_id
        where e.account_id = ${accountId} and e.period_start = ${balance.period_start}
        group by 1, 2, 3
        on conflict (account_id, period_start, assistant_key) do update set
          cost_micros = excluded.cost_micros, request_count = excluded.request_count, input_tokens = excluded.input_tokens,
          output_tokens = excluded.output_tokens, events = excluded.events`;
      await tx`
        insert into usage_daily_totals (account_id, day, period_start, assistant_key, source, kind, cost_micros, request_count,
                                        input_tokens, output_tokens, units, events)
        select e.account_id, usage_event_day(e), e.period_start, coalesce(e.assistant_id, ''), e.source, e.kind, sum(e.cost_micros),
               count(*) filter (where r.counts_as_request and e.outcome <> 'released'), sum(e.input_tokens), sum(e.output_tokens),
               sum(e.units), count(*)
        from usage_events e join usage_reservations r on r.id = e.reservation_id
        where e.account_id = ${accountId} and e.period_start = ${balance.period_start}
        group by 1, 2, 3, 4, 5, 6`;
      await tx`
        update usage_balances b set consumed_micros = s.cost, request_count = s.requests
        from (select coalesce(sum(cost_micros), 0)::int8 as cost, coalesce(sum(request_count), 0)::int8 as requests
              from usage_period_assistant_totals where account_id = ${accountId} and period_start = ${balance.period_start}) s
        where b.account_id = ${accountId} and b.period_start = ${balance.period_start}`;
      await tx`
        insert into conversations (id, assistant_id, account_id, visitor_id, source, message_count, created_at, updated_at)
        select 'conv_bench_' || g, (${assistants} :: text[])[1 + g % 3], ${accountId}, 'visitor-' || (g % 997), 'widget', 2,
               now() - (g % 2592000) * interval '1 second', now() - (g % 2592000) * interval '1 second'
        from generate_series(1, ${options.conversations}) g`;
    });
    await sql`vacuum analyze usage_events`;
    await sql`vacuum analyze usage_reservations`;
    await sql`vacuum analyze usage_period_assistant_totals`;
    await sql`vacuum analyze usage_daily_totals`;
    await sql`vacuum analyze conversations`;
    const seedSeconds = round((performance.now() - seedStarted) / 1000, 1);
    options.log(`usage: seeded in ${seedSeconds} s`);

    const timings = new Map<string, number[]>(ROUTES.map((r) => [r.path, []]));
    const call = async (path: string): Promise<number> => {
      const started = performance.now();
      const res = await get(path);
      await res.arrayBuffer();
      const ms = performance.now() - started;
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
      return ms;
    };
    // One set of figures: the days of the period add up to its total, to the micro.
    const daily = (await (await get('/api/v1/account/usage/daily')).json()) as { days: Array<{ costMicros: number }> };
    const after = (await (await get(ROUTES[1]!.path)).json()) as { summary: { consumedMicros: number } };
    const dailyTotalMicros = daily.days.reduce((n, d) => n + d.costMicros, 0);
    const dailyCheck = {
      dailyTotalMicros,
      periodTotalMicros: after.summary.consumedMicros,
      equal: dailyTotalMicros === after.summary.consumedMicros,
    };
    options.log(
      `usage: daily sum ${dailyTotalMicros} micros, period total ${after.summary.consumedMicros} micros (${dailyCheck.equal ? 'equal' : 'NOT equal'})`,
    );
    for (const route of ROUTES) for (let i = 0; i < 20; i++) await call(route.path);
    for (let i = 0; i < options.requests; i++) {
      for (const route of ROUTES) timings.get(route.path)!.push(await call(route.path));
    }
    const runs = ROUTES.map((route) => {
      const sorted = Float64Array.from(timings.get(route.path)!).sort();
      return {
        path: route.path,
        kind: route.kind,
        p50Ms: round(percentile(sorted, 50), 2),
        p95Ms: round(percentile(sorted, 95), 2),
        p99Ms: round(percentile(sorted, 99), 2),
        requests: sorted.length,
      };
    });
    return {
      status: 'ok',
      events: options.events,
      conversations: options.conversations,
      seedSeconds,
      dailyCheck,
      runs,
    };
  } catch (err) {
    return { status: 'failed', reason: err instanceof Error ? err.message : String(err), runs: [] };
  } finally {
    await sql.end({ timeout: 5 });
    for (const child of children.reverse()) await child.stop();
  }
}

/** The usage table for the console (and RESULTS.md): `table` is the report's own formatter. */
export function usageLines(usage: UsageResult, table: (header: string[], rows: string[][]) => string[]): string[] {
  if (usage.status !== 'ok') return [`${usage.status}: ${usage.reason ?? ''}`];
  return [
    `${usage.events} usage events in the current period and ${usage.conversations} conversations on one account (seeded in ${usage.seedSeconds} s); ` +
      `${usage.runs[0]?.requests ?? 0} sequential requests per route over one connection, routes interleaved.`,
    ...table(
      ['route', 'p50 ms', 'p95 ms', 'p99 ms', 'target'],
      usage.runs.map((r) => [
        r.path,
        r.p50Ms.toFixed(2),
        r.p95Ms.toFixed(2),
        r.p99Ms.toFixed(2),
        r.kind === 'summary' ? 'p95 <= 10 ms' : r.kind === 'report' ? 'p95 <= 50 ms' : '(floor: no work)',
      ]),
    ),
  ];
}

export function usageTargets(
  usage: UsageResult | undefined,
): Array<{ target: string; goal: string; measured: string; met: boolean | null }> {
  if (usage === undefined) return [];
  const summary = usage.runs.filter((r) => r.kind === 'summary');
  const reports = usage.runs.filter((r) => r.kind === 'report');
  const floor = usage.runs.find((r) => r.kind === 'floor');
  const worst = (runs: UsageRouteRun[]) => runs.reduce((w, r) => (r.p95Ms > w.p95Ms ? r : w));
  const check = (target: string, goal: string, runs: UsageRouteRun[], limitMs: number) =>
    runs.length === 0
      ? { target, goal, measured: `not measured: ${usage.reason ?? usage.status}`, met: null }
      : {
          target,
          goal,
          measured: `${worst(runs).p95Ms.toFixed(2)} ms (${worst(runs).path}; GET /healthz p95 ${floor?.p95Ms.toFixed(2) ?? '?'} ms in the same loop)`,
          met: worst(runs).p95Ms <= limitMs,
        };
  const daily = usage.runs.filter((r) => r.path === '/api/v1/account/usage/daily');
  return [
    check('Usage summary (1M events)', 'p95 <= 10 ms', summary, 10),
    check('Usage reports (1M events)', 'p95 <= 50 ms (worst route)', reports, 50),
    check('Usage daily route (1M events)', 'p95 <= 50 ms', daily, 50),
    usage.dailyCheck === undefined
      ? { target: 'Daily sums = period total', goal: 'equal to the micro', measured: 'not measured', met: null }
      : {
          target: 'Daily sums = period total',
          goal: 'equal to the micro',
          measured: `${usage.dailyCheck.dailyTotalMicros} vs ${usage.dailyCheck.periodTotalMicros} micros`,
          met: usage.dailyCheck.equal,
        },
  ];
}
