import { dashboardApi, type PlanCode } from '../api/dashboard-routes.js';
import { ErrorBox, Loading, useAction, useLoad } from '../ui/components.js';
import { date } from '../ui/format.js';

const PLAN_NOTES: Record<Exclude<PlanCode, 'free'>, string> = {
  starter: '$12 AI budget, 5 assistants, 2,000 requests, 120 voice minutes a month',
  pro: '$45 AI budget, 20 assistants, 15,000 requests, 600 voice minutes, evals',
  business: '$150 AI budget, 100 assistants, 50,000 requests, 2,000 voice minutes, evals',
};

/** Plan and subscription; checkout and the customer portal open the billing provider's pages. */
export function BillingPage() {
  const load = useLoad(() => dashboardApi.billing(), []);
  const go = useAction(async (target: 'portal' | Exclude<PlanCode, 'free'>) => {
    const { url } = target === 'portal' ? await dashboardApi.portal() : await dashboardApi.checkout(target);
    location.assign(url);
  });
  return (
    <section>
      <h1 tabIndex={-1}>Billing</h1>
      {load.state === 'loading' && <Loading label="Loading billing…" />}
      {load.state === 'error' &&
        ((load.error as { status?: number }).status === 503 ? (
          <div class="card notice" role="status">
            <h2>Billing is not set up on this server</h2>
            <p>
              The operator has not configured a billing provider, so plans cannot be bought here. Your account stays on
              its current plan; an operator can change it.
            </p>
          </div>
        ) : (
          <ErrorBox error={load.error} title="Could not load billing" />
        ))}
      {load.state === 'ready' && (
        <div class="stack">
          <section class="card">
            <h2>
              Current plan: <span class="plan">{load.data.billing.planCode}</span>
            </h2>
            <p class="muted">
              Period {date(load.data.billing.periodStart)} – {date(load.data.billing.periodEnd)}
              {load.data.billing.subscription &&
                ` · subscription ${load.data.billing.subscription.status ?? 'unknown'}`}
              {load.data.billing.server === 'sandbox' && ' · sandbox (test payments)'}
            </p>
            {load.data.billing.subscription && (
              <button type="button" disabled={go.busy} onClick={() => void go.run('portal')}>
                Manage subscription
              </button>
            )}
          </section>
          <section class="card" aria-labelledby="plans-h">
            <h2 id="plans-h">Plans</h2>
            <ul class="plans">
              {load.data.billing.plans.map((p) => (
                <li class="plan-card">
                  <h3>{p.planCode}</h3>
                  <p>{PLAN_NOTES[p.planCode]}</p>
                  {p.current ? (
                    <p>
                      <strong>Your plan</strong>
                    </p>
                  ) : (
                    <button
                      type="button"
                      class="primary"
                      disabled={!p.available || go.busy}
                      onClick={() => void go.run(p.planCode)}
                      aria-label={`Choose ${p.planCode}`}
                    >
                      {p.available ? `Choose ${p.planCode}` : 'Not available'}
                    </button>
                  )}
                </li>
              ))}
            </ul>
          </section>
          <ErrorBox error={go.error} title="The billing provider could not be opened" />
        </div>
      )}
    </section>
  );
}
