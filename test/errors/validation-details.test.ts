import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner, dashboardHeaders, login } from '../helpers/identity.js';

type Refusal = { error: string; code: string; details: { issues: Array<{ path: string; message: string }> } };

t.test('VALIDATION_FAILED names each bad field and says why, in the body and in the sentence', async (t) => {
  const { url, deps, app } = await startTestApp(t);
  const owner = await createOwner(deps.sql);
  const cookie = await login(url, owner.email, owner.password);

  t.test('a key with no scope ticked: scopes, "choose at least one scope"', async (t) => {
    const res = await fetch(`${url}/api/account/keys`, {
      method: 'POST',
      headers: dashboardHeaders(url, cookie),
      body: JSON.stringify({ name: 'ci', scopes: [] }),
    });
    t.equal(res.status, 400);
    const body = (await res.json()) as Refusal;
    t.equal(body.code, 'VALIDATION_FAILED');
    t.same(body.details.issues, [{ path: 'body.scopes', message: 'choose at least one scope' }]);
    t.match(body.error, /scopes choose at least one scope/);
  });

  t.test('several bad fields at once: each named, unknown fields one by one, missing ones "is required"', async (t) => {
    const res = await fetch(`${url}/api/v1/assistants`, {
      method: 'POST',
      headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
      body: JSON.stringify({ description: 7, colour: 'red', size: 'xl' }),
    });
    t.equal(res.status, 400);
    const { details } = (await res.json()) as Refusal;
    const byPath = Object.fromEntries(details.issues.map((i) => [i.path, i.message]));
    t.equal(byPath['body.name'], 'is required');
    t.match(byPath['body.description'], /^must be a string/);
    t.equal(byPath['body.colour'], 'is not a known field');
    t.equal(byPath['body.size'], 'is not a known field');
  });

  t.test('query values: a limit out of range says the bound', async (t) => {
    const res = await fetch(`${url}/api/v1/assistants?limit=500`, { headers: bearer(owner.secret) });
    t.equal(res.status, 400);
    const { details } = (await res.json()) as Refusal;
    t.same(details.issues, [{ path: 'query.limit', message: 'must be at most 100' }]);
  });

  t.test('the contract documents the details: ValidationDetails with path and message', async (t) => {
    const schemas = (app.openapi['components'] as { schemas: Record<string, unknown> }).schemas;
    t.ok(schemas['ValidationDetails'], 'a named schema');
    t.match(JSON.stringify(schemas['ValidationIssue']), /"path"[\s\S]*"message"/);
    t.match(JSON.stringify(schemas['Error']), /ValidationDetails/);
  });
});
