import t from 'tap';
import { loadConfig } from '../../src/config/index.js';
import { refusalError } from '../../src/metering/errors.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner, login } from '../helpers/identity.js';

/**
 * A server without billing is self-hosted by default: its owners meet no plan wall (the limits the dashboard reads
 * lift every cap and turn evals on), and where a plan does refuse, the refusal says how an operator unlocks it.
 */
t.test('SELF_HOSTED: on by default without billing, off with billing or enforce, refused with enforce', async (t) => {
  const base = { NODE_ENV: 'test', DATA_DIR: '/tmp', SECRET_KEY: 'x'.repeat(40) };
  t.equal(loadConfig(base).SELF_HOSTED, true, 'no billing configured: self-hosted');
  t.equal(loadConfig({ ...base, BILLING_ACCESS_TOKEN: 'polar_test' }).SELF_HOSTED, false, 'billing: not');
  t.equal(loadConfig({ ...base, HOSTED_USAGE_ENFORCEMENT: 'enforce' }).SELF_HOSTED, false, 'enforce: not');
  t.equal(loadConfig({ ...base, BILLING_ACCESS_TOKEN: 'polar_test', SELF_HOSTED: 'true' }).SELF_HOSTED, true);
  t.throws(
    () => loadConfig({ ...base, SELF_HOSTED: 'true', HOSTED_USAGE_ENFORCEMENT: 'enforce' }),
    /SELF_HOSTED.*HOSTED_USAGE_ENFORCEMENT=enforce/,
    'contradictory settings stop boot, naming both',
  );
});

t.test('a self-hosted server lifts the plan limits its owners see; evals are on', async (t) => {
  const app = await startTestApp(t);
  const owner = await createOwner(app.database.sql);
  const cookie = await login(app.url, owner.email, owner.password);
  const res = await fetch(`${app.url}/api/v1/account/usage/limits`, { headers: { cookie } });
  t.equal(res.status, 200);
  t.match((await res.json()) as unknown, {
    limits: {
      planCode: 'free',
      selfHosted: true,
      billingConfigured: false,
      evalsEnabled: true,
      maxAssistants: null,
      monthlyRequestCap: null,
    },
  });
});

t.test('a plan refusal of evals says how an operator unlocks them, not only "upgrade"', async (t) => {
  const err = refusalError({ kind: 'evals', planCode: 'free' }, 'owner');
  t.equal(err.code, 'PLAN_LIMIT_EVALS', 'the code is stable');
  t.match(err.message, /operator/, 'it names the operator');
  t.match(err.message, /SELF_HOSTED/, 'and the setting that lifts plan limits on a server without billing');
});
