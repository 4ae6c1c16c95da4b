import { useState } from 'preact/hooks';
import {
  dashboardApi,
  type AccountStatus,
  type AdminAccount,
  type AuditEntry,
  type PlanCode,
  type SessionUser,
} from '../api/dashboard-routes.js';
import { Empty, ErrorBox, Loaded, Table, useAction, useLoad, type Load } from '../ui/components.js';
import { dateTime, dollars } from '../ui/format.js';

const PLANS: PlanCode[] = ['free', 'starter', 'pro', 'business'];
const STATUSES: AccountStatus[] = ['active', 'suspended', 'disabled'];

/** Operators (ADMIN_USER_IDS): every hosting account, highest spend first; change plan, status, limit; grant credit. */
export function AdminPage({ self }: { self: SessionUser }) {
  const [offset, setOffset] = useState(0);
  const load = useLoad(() => dashboardApi.adminAccounts(offset), [offset]);
  const audit = useLoad(() => dashboardApi.adminAudit(), []);
  // After a change, show what the server now says (accounts and audit log) before saying it is done.
  const changed = async () => {
    await Promise.all([load.reload(), audit.reload()]);
  };
  return (
    <section>
      <h1 tabIndex={-1}>Admin</h1>
      {!self.user.isAdmin && <p class="muted">Your user is not an operator; the server decides what you may see.</p>}
      <Loaded load={load} label="Loading accounts…">
        {({ accounts, limit }) => (
          <>
            {accounts.length === 0 ? (
              <Empty>
                <p>No accounts on this page.</p>
              </Empty>
            ) : (
              <ul class="admin-list" aria-label="Accounts">
                {accounts.map((a) => (
                  <AccountRow key={a.id} account={a} onChanged={changed} />
                ))}
              </ul>
            )}
            <div class="actions">
              <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - limit))}>
                Previous page
              </button>
              <button type="button" disabled={accounts.length < limit} onClick={() => setOffset(offset + limit)}>
                Next page
              </button>
            </div>
          </>
        )}
      </Loaded>
      {load.state !== 'error' && <AuditLog load={audit} />}
    </section>
  );
}

function summarize(value: unknown): string {
  if (value === null || value === undefined) return '—';
  const text = JSON.stringify(value);
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}

function AuditLog({ load }: { load: Load<{ entries: AuditEntry[] }> }) {
  return (
    <section class="card audit" aria-labelledby="audit-h">
      <h2 id="audit-h">Audit log</h2>
      <Loaded load={load} label="Loading the audit log…">
        {({ entries }) =>
          entries.length === 0 ? (
            <Empty>
              <p>No changes recorded yet.</p>
            </Empty>
          ) : (
            <Table label="Audit log" columns={['When', 'Action', 'Target', 'By', 'Before → after']}>
              {entries.map((e) => (
                <tr>
                  <td>{dateTime(e.createdAt)}</td>
                  <td>{e.action}</td>
                  <td>
                    {e.targetType} <code>{e.targetId}</code>
                  </td>
                  <td>{e.actorUserId ? <code>{e.actorUserId}</code> : 'system / CLI'}</td>
                  <td class="small">
                    <code>{summarize(e.before)}</code> → <code>{summarize(e.after)}</code>
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
    </section>
  );
}

function AccountRow({ account: a, onChanged }: { account: AdminAccount; onChanged: () => Promise<void> }) {
  const [plan, setPlan] = useState<PlanCode>(a.planCode);
  const [status, setStatus] = useState<AccountStatus>(a.status);
  const [override, setOverride] = useState(
    a.limitOverrideMicros === null ? '' : String(a.limitOverrideMicros / 1_000_000),
  );
  const [credit, setCredit] = useState('');
  const [done, setDone] = useState('');
  const label = a.name ?? a.ownerEmail;
  const save = useAction(async () => {
    setDone('');
    const patch: { planCode?: PlanCode; status?: AccountStatus; limitOverrideMicros?: number | null } = {};
    if (plan !== a.planCode) patch.planCode = plan;
    if (status !== a.status) patch.status = status;
    const micros = override.trim() === '' ? null : Math.round(Number(override) * 1_000_000);
    if (micros !== a.limitOverrideMicros) patch.limitOverrideMicros = micros;
    if (Object.keys(patch).length === 0) return setDone('Nothing changed.');
    await dashboardApi.adminPatch(a.id, patch);
    await onChanged();
    setDone('Saved (audit-logged).');
  });
  const grant = useAction(async () => {
    setDone('');
    await dashboardApi.adminCredit(a.id, Math.round(Number(credit) * 1_000_000));
    setCredit('');
    await onChanged();
    setDone('Credit granted (audit-logged).');
  });
  return (
    <li class="card account" aria-label={`Account ${label}`}>
      <h2>{label}</h2>
      <p class="muted">
        <code>{a.id}</code> · {a.ownerEmail} · created {dateTime(a.createdAt)}
      </p>
      <dl class="stats">
        <div>
          <dt>Plan</dt>
          <dd>{a.planCode}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>{a.status}</dd>
        </div>
        <div>
          <dt>Spend</dt>
          <dd>
            {dollars(a.consumedMicros)} / {dollars(a.limitMicros)}
          </dd>
        </div>
        <div>
          <dt>Requests</dt>
          <dd>{a.requestCount}</dd>
        </div>
        <div>
          <dt>Credit</dt>
          <dd>{dollars(a.creditMicros)}</dd>
        </div>
      </dl>
      <form
        class="row"
        aria-label={`Change ${label}`}
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <label>
          Plan
          <select value={plan} onChange={(e) => setPlan(e.currentTarget.value as PlanCode)}>
            {PLANS.map((p) => (
              <option value={p}>{p}</option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as AccountStatus)}>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Limit override in dollars <span class="muted">(blank: plan budget)</span>
          <input
            type="number"
            min={0}
            step="0.01"
            value={override}
            onInput={(e) => setOverride(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={save.busy}>
          Save changes
        </button>
      </form>
      <form
        class="row"
        aria-label={`Grant credit to ${label}`}
        onSubmit={(e) => {
          e.preventDefault();
          void grant.run();
        }}
      >
        <label>
          Credit in dollars
          <input
            type="number"
            min={0.01}
            step="0.01"
            required
            value={credit}
            onInput={(e) => setCredit(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={grant.busy || !(Number(credit) > 0)}>
          Grant credit
        </button>
      </form>
      <p role="status" aria-live="polite" class="muted">
        {done}
      </p>
      <ErrorBox error={save.error ?? grant.error} title="The change was refused" />
    </li>
  );
}
