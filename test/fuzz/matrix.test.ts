import fc from 'fast-check';
import t from 'tap';
import type { AnyRoute } from '../../src/http/index.js';
import { arbitraryOf } from './arbitraries.js';
import { PARAM_RESOURCES } from './cases.js';
import { call, createWorld, WIDGET_ORIGIN, type Tenant } from './world.js';

/**
 * The cross-account and cross-visitor matrix, generated from the route table. Every route is called by
 * tenant B (API key with every scope, dashboard cookie, keyless widget visitor) with tenant A's resources in its path
 * parameters and id fields. Nothing may answer 2xx about A's resources or show any of A's ids. A route added later is
 * covered without editing this file; a path parameter the matrix cannot map to a resource type fails it.
 */
const world = await createWorld(t);
const { app, a, b } = world;

type Actor = 'bearer' | 'cookie' | 'keyless';
const ACTORS: Actor[] = ['bearer', 'cookie', 'keyless'];

function headersOf(actor: Actor): Record<string, string> {
  if (actor === 'bearer') return { authorization: `Bearer ${b.keys['all']}` };
  if (actor === 'cookie') return { cookie: b.cookie, origin: app.url };
  return { origin: WIDGET_ORIGIN };
}

/** Every id of A's a response must never contain (A's public assistant id is public, and the widget may show it). */
function leakedIdsOf(tenant: Tenant, actor: Actor): string[] {
  const ids = [
    tenant.ids.assistant,
    tenant.ids.document,
    tenant.ids.conversation,
    tenant.ids.key,
    tenant.ids.voiceSession,
    tenant.ids.eval,
    tenant.ids.account,
    tenant.apiMessageId,
    tenant.widgetConversationId,
    tenant.widgetMessageId,
    tenant.owner.email,
    tenant.owner.keyId,
  ];
  return actor === 'keyless' ? ids : [...ids, tenant.ids.publicAssistant];
}

/** A body the route's schema accepts (sampled from it), or {} when none was found quickly. */
function validBody(route: AnyRoute): Record<string, unknown> | undefined {
  const schema = route.schemas.body;
  if (!schema || route.rawBody) return undefined;
  const samples = fc.sample(arbitraryOf(schema), { seed: 42, numRuns: 300 });
  for (const sample of samples)
    if (sample !== null && typeof sample === 'object' && schema.safeParse(sample).success)
      return sample as Record<string, unknown>;
  return {};
}

/** Variants of A's ids in the body and query fields that name resources. */
function foreignFields(
  route: AnyRoute,
  actor: Actor,
): Array<{ label: string; body?: Record<string, unknown>; query: Record<string, string> }> {
  const base = validBody(route);
  const bodyKeys = new Set(Object.keys(base ?? {}));
  const schemaKeys = (() => {
    const def = (route.schemas.body as unknown as { _zod?: { def: { shape?: Record<string, unknown> } } } | undefined)
      ?._zod?.def;
    return new Set(Object.keys(def?.shape ?? {}));
  })();
  const queryKeys = new Set(
    Object.keys(
      (route.schemas.query as unknown as { _zod?: { def: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def
        .shape ?? {},
    ),
  );
  const has = (k: string) => bodyKeys.has(k) || schemaKeys.has(k);
  const assistantRef = actor === 'keyless' ? a.ids.publicAssistant : a.ids.assistant;
  const common: Record<string, unknown> = {};
  if (has('assistantId')) common['assistantId'] = actor === 'keyless' ? a.ids.publicAssistant : assistantRef;
  if (has('visitorId')) common['visitorId'] = b.visitorId;
  if (route.auth === 'control-token') common['token'] = b.voiceControlToken;
  if (route.path === '/api/v1/voice/sessions') common['capabilities'] = ['heartbeat', 'playback_gate'];
  const query: Record<string, string> = {};
  if (queryKeys.has('assistantId')) query['assistantId'] = a.ids.assistant;
  const variants: Array<{ label: string; body?: Record<string, unknown>; query: Record<string, string> }> = [];
  const body = (extra: Record<string, unknown>) => (base === undefined ? undefined : { ...base, ...common, ...extra });
  if (has('conversationId')) {
    variants.push({ label: "A's API conversation", body: body({ conversationId: a.apiConversationId }), query });
    variants.push({
      label: "A's visitor's conversation",
      body: body({ conversationId: a.widgetConversationId }),
      query,
    });
  }
  if (has('messageId')) {
    variants.push({ label: "A's API answer", body: body({ messageId: a.apiMessageId }), query });
    variants.push({ label: "A's visitor's answer", body: body({ messageId: a.widgetMessageId }), query });
  }
  if (variants.length === 0)
    variants.push({ label: "A's ids", ...(base !== undefined ? { body: body({}) } : {}), query });
  return variants;
}

/** Routes that by design serve anyone who names A's public assistant (the widget): they may answer 2xx, never leak. */
const PUBLIC_BY_ID = new Set(['GET /api/v1/widget/:publicId/config', 'POST /api/v1/widget/sign']);
/**
 * A visitor id names no account's resource (the visitor's browser holds it): these act on the caller's own data about
 * that id, so B may get a 2xx naming A's visitor; what must hold is that A's data about the visitor stays (checked after
 * the matrix) and that none of A's ids comes back (checked for every row).
 */
const SCOPED_TO_CALLER = new Set(['DELETE /api/v1/visitors/:visitorId']);

function pathWith(route: AnyRoute, tenant: Tenant): { path: string; unknown: string[]; namesForeign: boolean } {
  const unknown: string[] = [];
  let namesForeign = false;
  const path = route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const type = PARAM_RESOURCES[name];
    if (type === undefined) {
      unknown.push(name);
      return 'unknown';
    }
    if (type !== 'plan') namesForeign = true;
    return encodeURIComponent(tenant.ids[type]);
  });
  return { path, unknown, namesForeign };
}

t.test("every route, called by B with A's resources: never 2xx about them, never one of A's ids", async (t) => {
  const routes = app.app.routes.filter((r) => r.path !== '/dashboard/*');
  t.ok(routes.length >= 40, `the matrix sees the whole route table (${routes.length} routes)`);
  const reached: Record<string, number> = {};
  for (const route of routes) {
    const name = `${route.method} ${route.path}`;
    const { path, unknown, namesForeign } = pathWith(route, a);
    if (unknown.length > 0) {
      t.fail(
        `${name}: path parameter ${unknown.map((u) => `:${u}`).join(', ')} names a resource the cross-account matrix does not know. ` +
          'Add it to PARAM_RESOURCES in test/fuzz/cases.ts and give each world tenant one of that type (test/fuzz/world.ts).',
      );
      continue;
    }
    for (const actor of ACTORS) {
      for (const variant of foreignFields(route, actor)) {
        const qs = new URLSearchParams(variant.query).toString();
        // Logging out with B's own cookie would end B's session for every later row.
        const headers =
          route.path === '/api/auth/logout' && actor === 'cookie' ? { origin: app.url } : headersOf(actor);
        const res = await call(app, route.method, qs ? `${path}?${qs}` : path, variant.body, headers);
        const label = `${actor} ${name} (${variant.label}) -> ${res.status}`;
        reached[String(res.status)] = (reached[String(res.status)] ?? 0) + 1;
        t.ok(res.status < 500, `${label}: not a 5xx`);
        const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? '');
        const leaked = leakedIdsOf(a, actor).filter((id) => text.includes(id));
        t.same(leaked, [], `${label}: none of A's ids in the answer`);
        const foreignBody = variant.label !== "A's ids" || variant.query['assistantId'] !== undefined;
        if (
          (namesForeign || foreignBody) &&
          !PUBLIC_BY_ID.has(name) &&
          !SCOPED_TO_CALLER.has(name) &&
          !(actor === 'keyless' && variant.label === "A's ids")
        ) {
          t.ok(res.status >= 400, `${label}: A's resource is not served to B`);
        }
      }
    }
  }
  t.comment(`matrix answers by status: ${JSON.stringify(reached)}`);
  const [kept] = await app.database.sql<Array<{ n: number }>>`
    select count(*)::int as n from conversations where id = ${a.widgetConversationId} and visitor_id = ${a.visitorId}`;
  t.equal(kept!.n, 1, "B deleting A's visitor id left A's conversation with that visitor");
});

t.test('the matrix knows every path parameter of the route table', async (t) => {
  const params = new Set(
    app.app.routes.flatMap((r) =>
      r.path
        .split('/')
        .filter((s) => s.startsWith(':'))
        .map((s) => s.slice(1)),
    ),
  );
  for (const p of params) t.ok(PARAM_RESOURCES[p] !== undefined, `:${p} maps to a resource type`);
  for (const type of new Set(Object.values(PARAM_RESOURCES)))
    t.ok(
      (a.ids[type] && b.ids[type] && a.ids[type] !== b.ids[type]) || type === 'plan',
      `each tenant owns its own ${type}`,
    );
});
