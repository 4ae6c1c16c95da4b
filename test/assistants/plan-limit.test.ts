import t, { type Test } from 'tap';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { bearer, createOwner, type TestOwner } from '../helpers/identity.js';
import { setPlan } from '../helpers/metering.js';

type ErrorBody = { code: string; reason?: string; details?: Record<string, unknown>; error: string };

/** Room for the bursts below: the per-key request rate limit is not what these tests are about. */
const env = { API_RATE_LIMIT_PER_MINUTE: '10000', DATABASE_POOL_SIZE: '12' };

function creator(app: TestApp, owner: TestOwner) {
  return (name: string) =>
    fetch(`${app.url}/api/v1/assistants`, {
      method: 'POST',
      headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
}

async function assistantsOf(app: TestApp, owner: TestOwner): Promise<number> {
  const res = await fetch(`${app.url}/api/v1/assistants?limit=100`, { headers: bearer(owner.secret) });
  return ((await res.json()) as { assistants: unknown[] }).assistants.length;
}

/** Fires `n` creations at once; answers their statuses and bodies. */
async function burst(create: ReturnType<typeof creator>, n: number) {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await create(`Burst ${i}`);
      return { status: res.status, body: (await res.json()) as ErrorBody };
    }),
  );
}

t.test('enforce: the plan assistant count is a hard cap on POST /api/v1/assistants', async (t) => {
  const app = await startTestApp(t, { env: { ...env, HOSTED_USAGE_ENFORCEMENT: 'enforce' } });

  t.test(
    'free plan (1 assistant): the second creation is 403 plan_limit with the limit; deleting frees the slot',
    async (t) => {
      const owner = await createOwner(app.deps.sql);
      const create = creator(app, owner);
      const first = await create('First');
      t.equal(first.status, 201);
      const { assistant } = (await first.json()) as { assistant: { id: string } };

      const second = await create('Second');
      t.equal(second.status, 403);
      const body = (await second.json()) as ErrorBody;
      t.equal(body.reason, 'plan_limit');
      t.equal(body.code, 'PLAN_LIMIT_ASSISTANTS');
      t.same(body.details, { maxAssistants: 1, assistantCount: 1 }, 'the owner learns the limit');
      t.equal(await assistantsOf(app, owner), 1, 'nothing was created');

      t.equal(
        (
          await fetch(`${app.url}/api/v1/assistants/${assistant.id}`, {
            method: 'DELETE',
            headers: bearer(owner.secret),
          })
        ).status,
        200,
      );
      t.equal((await create('Replacement')).status, 201, 'a deleted assistant gives its slot back');
      t.equal((await create('One too many')).status, 403);
    },
  );

  t.test('concurrent creations at the last free slots: exactly the plan count succeeds', async (t) => {
    for (const [plan, max, n] of [
      ['free', 1, 10],
      ['starter', 5, 20],
    ] as const) {
      const owner = await createOwner(app.deps.sql);
      await setPlan(app.deps.sql, owner.accountId, plan);
      const results = await burst(creator(app, owner), n);
      const created = results.filter((r) => r.status === 201);
      const refused = results.filter((r) => r.status !== 201);
      t.equal(created.length, max, `${plan}: ${max} of ${n} concurrent creations succeed`);
      t.ok(
        refused.every(
          (r) => r.status === 403 && r.body.reason === 'plan_limit' && r.body.details?.['maxAssistants'] === max,
        ),
        `${plan}: every other one is 403 plan_limit`,
      );
      t.equal(await assistantsOf(app, owner), max, `${plan}: the account holds exactly ${max}`);
    }
  });

  t.test('an upgraded plan lets the owner create more', async (t) => {
    const owner = await createOwner(app.deps.sql);
    const create = creator(app, owner);
    t.equal((await create('One')).status, 201);
    t.equal((await create('Two')).status, 403);
    await setPlan(app.deps.sql, owner.accountId, 'starter');
    t.equal((await create('Two')).status, 201);
  });
});

async function neverRefused(t: Test, mode: 'shadow' | 'off') {
  const app = await startTestApp(t, { env: { ...env, HOSTED_USAGE_ENFORCEMENT: mode } });
  const owner = await createOwner(app.deps.sql);
  const results = await burst(creator(app, owner), 4);
  t.same(
    results.map((r) => r.status),
    [201, 201, 201, 201],
    `${mode}: a free account (1 assistant) may create beyond its plan`,
  );
  t.equal(await assistantsOf(app, owner), 4);
}

t.test('shadow: creation is never refused', (t) => neverRefused(t, 'shadow'));
t.test('off: creation is never refused', (t) => neverRefused(t, 'off'));
