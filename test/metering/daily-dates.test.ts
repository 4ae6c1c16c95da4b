import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { createOwner, dashboardHeaders, login } from '../helpers/identity.js';

/**
 * The daily usage route's dates at the edges of the calendar: a date the database cannot hold (year 0) or one that
 * does not exist (30 February) is a 400 naming the field, never a 500.
 */
const app = await startTestApp(t);
const owner = await createOwner(app.database.sql);
const headers = dashboardHeaders(app.url, await login(app.url, owner.email, owner.password));

const daily = async (query: string) => {
  const res = await fetch(`${app.url}/api/v1/account/usage/daily?${query}`, { headers });
  return { status: res.status, body: (await res.json()) as any };
};

t.test('dates the calendar or the database cannot hold are refused 400 with the field', async (t) => {
  for (const [query, field] of [
    ['from=0000-01-01&to=0000-01-02', 'from'],
    ['from=2025-01-01&to=0000-01-02', 'to'],
    ['from=2025-02-30&to=2025-03-01', 'from'],
    ['from=2025-02-01&to=2025-02-29', 'to'],
  ] as const) {
    const res = await daily(query);
    t.equal(res.status, 400, `${query}: ${JSON.stringify(res.body)}`);
    t.equal(res.body.code, 'VALIDATION_FAILED', query);
    t.match(JSON.stringify(res.body.details), field, `${query}: names ${field}`);
  }
  const first = await daily('from=0001-01-01&to=0001-01-02');
  t.equal(first.status, 200, 'the first year the calendar holds is answered');
  t.equal(first.body.days.length, 2);
  const leap = await daily('from=2024-02-28&to=2024-02-29');
  t.equal(leap.status, 200, 'a leap day exists');
});
