import { useState } from 'preact/hooks';
import { dashboardApi, SCOPES, type Scope } from '../api/dashboard-routes.js';
import {
  ConfirmButton,
  CopyButton,
  Empty,
  ErrorBox,
  FieldError,
  fieldErrorId,
  fieldIssues,
  Loaded,
  Table,
  useAction,
  useLoad,
} from '../ui/components.js';
import { dateTime } from '../ui/format.js';

/** API keys: create (the secret is shown once, here, and never again), list with last use, revoke. */
export function KeysPage() {
  const load = useLoad(() => dashboardApi.listKeys(), []);
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  return (
    <section>
      <h1 tabIndex={-1}>API keys</h1>
      <p class="muted">
        Keys let your servers call the Parley API as this account. Give each key only the scopes it needs.
      </p>
      {created && (
        <div class="card secret" role="region" aria-label="New key secret">
          <h2>Copy the secret of “{created.name}” now</h2>
          <p class="warning" role="alert">
            This is the only time the secret is shown. Store it somewhere safe: Parley keeps only a hash and cannot show
            it again.
          </p>
          <p>
            <code class="secret-value" aria-label="API key secret">
              {created.secret}
            </code>
          </p>
          <CopyButton text={created.secret} label="Copy secret" />{' '}
          <button type="button" onClick={() => setCreated(null)}>
            I have stored it
          </button>
        </div>
      )}
      <CreateKeyForm
        onCreated={(name, secret) => {
          setCreated({ name, secret });
          void load.reload();
        }}
      />
      <section class="card" aria-labelledby="keys-h">
        <h2 id="keys-h">Active keys</h2>
        <Loaded load={load} label="Loading keys…">
          {({ keys }) =>
            keys.length === 0 ? (
              <Empty>
                <p>No API keys yet.</p>
              </Empty>
            ) : (
              <Table columns={['Name', 'Key', 'Scopes', 'Created', 'Last used', <span class="sr-only">Actions</span>]}>
                {keys.map((k) => (
                  <tr>
                    <td>{k.name}</td>
                    <td>
                      <code>{k.prefix}…</code>
                    </td>
                    <td class="scopes">{k.scopes.join(', ')}</td>
                    <td>{dateTime(k.createdAt)}</td>
                    <td>{k.lastUsedAt ? dateTime(k.lastUsedAt) : 'Never'}</td>
                    <td>
                      <ConfirmButton
                        label="Revoke"
                        name={`Revoke ${k.name}`}
                        confirmLabel="Yes, revoke"
                        question={`Revoke “${k.name}”? Calls with it fail from now on.`}
                        onConfirm={async () => {
                          await dashboardApi.revokeKey(k.id);
                          await load.reload();
                        }}
                      />
                    </td>
                  </tr>
                ))}
              </Table>
            )
          }
        </Loaded>
      </section>
    </section>
  );
}

function CreateKeyForm({ onCreated }: { onCreated: (name: string, secret: string) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<Scope>>(new Set());
  const create = useAction(async () => {
    const result = await dashboardApi.createKey(
      name.trim(),
      SCOPES.filter((s) => scopes.has(s)),
    );
    setName('');
    setScopes(new Set());
    onCreated(result.key.name, result.secret);
  });
  const invalid = (field: string) =>
    fieldIssues(create.error).some((i) => i.field === field || i.field.startsWith(`${field}.`));
  const toggle = (scope: Scope, on: boolean) => {
    const next = new Set(scopes);
    if (on) next.add(scope);
    else next.delete(scope);
    setScopes(next);
  };
  return (
    <form
      class="card form"
      aria-label="Create key"
      onSubmit={(e) => {
        e.preventDefault();
        void create.run();
      }}
    >
      <h2>Create a key</h2>
      <label>
        Key name
        <input
          required
          maxLength={100}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
          aria-invalid={invalid('name')}
          aria-describedby={fieldErrorId('name')}
        />
      </label>
      <FieldError error={create.error} field="name" />
      <fieldset class="scopes-grid" aria-invalid={invalid('scopes')} aria-describedby={fieldErrorId('scopes')}>
        <legend>Scopes</legend>
        {SCOPES.map((scope) => (
          <label class="check">
            <input
              type="checkbox"
              checked={scopes.has(scope)}
              onChange={(e) => toggle(scope, e.currentTarget.checked)}
            />
            {scope}
          </label>
        ))}
      </fieldset>
      <FieldError error={create.error} field="scopes" />
      <ErrorBox error={create.error} title="Could not create the key" />
      <div class="actions">
        <button type="submit" class="primary" disabled={create.busy}>
          {create.busy ? 'Creating…' : 'Create key'}
        </button>
      </div>
    </form>
  );
}
