import { useState } from 'preact/hooks';
import type { components } from '@parley/sdk';
import { v1 } from '../api/client.js';
import { ConfirmButton, CopyButton, Empty, ErrorBox, Loaded, Table, useAction, useLoad } from '../ui/components.js';
import { dateTime } from '../ui/format.js';

type Endpoint = components['schemas']['WebhookEndpoint'];
type Delivery = components['schemas']['WebhookDelivery'];
type EventType = Endpoint['events'][number];

const EVENTS: Array<[EventType, string]> = [
  ['voice.session.started', 'A call started'],
  ['voice.session.ended', 'A call ended (with its duration and cost)'],
  ['document.processed', 'A document is ready'],
  ['document.failed', 'A document could not be processed'],
  ['budget.threshold_crossed', 'The usage budget crossed a threshold'],
  ['conversation.analyzed', 'A conversation ended and was analysed (the end-of-call report)'],
];

/** Deliveries shown as the document chips are: delivered reads as done, disabled as failed. */
const BADGE: Record<Delivery['status'], string> = {
  pending: 'pending',
  delivered: 'ready',
  failed: 'failed',
  disabled: 'failed',
};

/** Webhooks: endpoints that receive signed events (secret shown once), a test event, deliveries and replays. */
export function WebhooksPage() {
  const load = useLoad(async () => (await v1.GET('/api/v1/webhook-endpoints')).endpoints, []);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  return (
    <section>
      <h1 tabIndex={-1}>Webhooks</h1>
      <p class="muted">
        Parley sends signed events (Standard Webhooks) to your endpoints when calls start and end, documents are
        processed and budgets cross a threshold. Verify them with the signing secret, e.g. with the SDK's verifyWebhook.
      </p>
      {secret && (
        <div class="card secret" role="region" aria-label="Signing secret">
          <h2>Copy the signing secret of {secret.url} now</h2>
          <p class="warning" role="alert">
            This is the only time the secret is shown. Store it with your receiver: Parley cannot show it again.
          </p>
          <p>
            <code class="secret-value" aria-label="Webhook signing secret">
              {secret.secret}
            </code>
          </p>
          <CopyButton text={secret.secret} label="Copy secret" />{' '}
          <button type="button" onClick={() => setSecret(null)}>
            I have stored it
          </button>
        </div>
      )}
      <AddEndpointForm
        onCreated={(url, s) => {
          setSecret({ url, secret: s });
          void load.reload();
        }}
      />
      <Loaded load={load} label="Loading endpoints…">
        {(endpoints) =>
          endpoints.length === 0 ? (
            <Empty>
              <p>No endpoints yet.</p>
            </Empty>
          ) : (
            <>
              {endpoints.map((endpoint) => (
                <EndpointCard
                  key={endpoint.id}
                  endpoint={endpoint}
                  onChanged={() => void load.reload()}
                  onSecret={(s) => setSecret({ url: endpoint.url, secret: s })}
                />
              ))}
            </>
          )
        }
      </Loaded>
    </section>
  );
}

function AddEndpointForm({ onCreated }: { onCreated: (url: string, secret: string) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Set<EventType>>(new Set(['voice.session.started', 'voice.session.ended']));
  const create = useAction(async () => {
    const created = await v1.POST('/api/v1/webhook-endpoints', {
      body: {
        url: url.trim(),
        events: EVENTS.map(([e]) => e).filter((e) => events.has(e)),
        ...(description.trim() ? { description: description.trim() } : {}),
      },
    });
    setUrl('');
    setDescription('');
    onCreated(created.url, created.secret);
  });
  const toggle = (event: EventType, on: boolean) => {
    const next = new Set(events);
    if (on) next.add(event);
    else next.delete(event);
    setEvents(next);
  };
  return (
    <form
      class="card form"
      aria-label="Add endpoint"
      onSubmit={(e) => {
        e.preventDefault();
        void create.run();
      }}
    >
      <h2>Add an endpoint</h2>
      <label>
        Endpoint URL
        <input
          required
          type="url"
          maxLength={2048}
          placeholder="https://example.com/parley/webhooks"
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
      </label>
      <label>
        Description (optional)
        <input maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <fieldset class="scopes-grid">
        <legend>Events</legend>
        {EVENTS.map(([event, label]) => (
          <label class="check">
            <input
              type="checkbox"
              checked={events.has(event)}
              onChange={(e) => toggle(event, e.currentTarget.checked)}
            />
            <span>
              <code>{event}</code> {label}
            </span>
          </label>
        ))}
      </fieldset>
      <ErrorBox error={create.error} title="Could not add the endpoint" />
      <div class="actions">
        <button type="submit" class="primary" disabled={create.busy || events.size === 0}>
          {create.busy ? 'Adding…' : 'Add endpoint'}
        </button>
      </div>
    </form>
  );
}

function EndpointCard(props: { endpoint: Endpoint; onChanged: () => void; onSecret: (secret: string) => void }) {
  const { endpoint } = props;
  const path = { endpointId: endpoint.id };
  const [showDeliveries, setShowDeliveries] = useState(false);
  const [tick, setTick] = useState(0);
  const test = useAction(async () => {
    await v1.POST('/api/v1/webhook-endpoints/{endpointId}/test', { params: { path }, body: {} });
    setShowDeliveries(true);
    setTick((n) => n + 1);
  });
  const toggle = useAction(async () => {
    await v1.PATCH('/api/v1/webhook-endpoints/{endpointId}', {
      params: { path },
      body: { enabled: !endpoint.enabled },
    });
    props.onChanged();
  });
  const rotate = useAction(async () => {
    const rotated = await v1.POST('/api/v1/webhook-endpoints/{endpointId}/rotate-secret', {
      params: { path },
      body: {},
    });
    props.onSecret(rotated.secret);
  });
  return (
    <section class="card" aria-label={`Endpoint ${endpoint.url}`}>
      <h2>
        <code>{endpoint.url}</code>
      </h2>
      {endpoint.description && <p>{endpoint.description}</p>}
      <p>
        {endpoint.enabled ? (
          <span class="badge badge-ready">enabled</span>
        ) : (
          <span class="badge badge-failed">
            {endpoint.disabledReason === 'gone' ? 'disabled: it answered 410 Gone' : 'disabled'}
          </span>
        )}{' '}
        <span class="muted">{endpoint.events.join(', ')}</span>
      </p>
      <div class="actions">
        <button type="button" disabled={test.busy || !endpoint.enabled} onClick={() => void test.run()}>
          {test.busy ? 'Sending…' : 'Send test event'}
        </button>
        <button type="button" disabled={toggle.busy} onClick={() => void toggle.run()}>
          {endpoint.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" disabled={rotate.busy} onClick={() => void rotate.run()}>
          Rotate secret
        </button>
        <button type="button" aria-expanded={showDeliveries} onClick={() => setShowDeliveries(!showDeliveries)}>
          {showDeliveries ? 'Hide deliveries' : 'Show deliveries'}
        </button>
        <ConfirmButton
          label="Delete"
          name={`Delete ${endpoint.url}`}
          confirmLabel="Yes, delete"
          question={`Delete the endpoint ${endpoint.url}? It receives no more events.`}
          onConfirm={async () => {
            await v1.DELETE('/api/v1/webhook-endpoints/{endpointId}', { params: { path } });
            props.onChanged();
          }}
        />
      </div>
      <ErrorBox error={test.error ?? toggle.error ?? rotate.error} />
      {showDeliveries && <Deliveries endpointId={endpoint.id} refresh={tick} enabled={endpoint.enabled} />}
    </section>
  );
}

function Deliveries({ endpointId, refresh, enabled }: { endpointId: string; refresh: number; enabled: boolean }) {
  const path = { endpointId };
  const load = useLoad(
    async () => v1.GET('/api/v1/webhook-endpoints/{endpointId}/deliveries', { params: { path, query: { limit: 20 } } }),
    [endpointId, refresh],
  );
  const replay = useAction(async (deliveryId: string) => {
    await v1.POST('/api/v1/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/replay', {
      params: { path: { endpointId, deliveryId } },
      body: {},
    });
    await load.reload();
  });
  return (
    <div>
      <h3>Deliveries</h3>
      <button type="button" onClick={() => void load.reload()}>
        Refresh
      </button>
      <ErrorBox error={replay.error} title="Could not replay" />
      <Loaded load={load} label="Loading deliveries…">
        {({ deliveries }) =>
          deliveries.length === 0 ? (
            <Empty>
              <p>Nothing sent to this endpoint yet.</p>
            </Empty>
          ) : (
            <Table
              label="Deliveries"
              columns={['Event', 'Status', 'Attempts', 'Last answer', 'Next attempt', 'Created', 'Message id', '']}
            >
              {deliveries.map((d) => (
                <tr>
                  <td>
                    <code>{d.eventType}</code>
                  </td>
                  <td>
                    <span class={`badge badge-${BADGE[d.status]}`}>{d.status}</span>
                  </td>
                  <td>{d.attempts}</td>
                  <td>{d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? '–')}</td>
                  <td>{d.nextAttemptAt ? dateTime(d.nextAttemptAt) : '–'}</td>
                  <td>{dateTime(d.createdAt)}</td>
                  <td>
                    <code>{d.messageId}</code>
                  </td>
                  <td>
                    <button
                      type="button"
                      aria-label={`Replay ${d.eventType} ${d.messageId}`}
                      disabled={replay.busy || !enabled}
                      onClick={() => void replay.run(d.id)}
                    >
                      Replay
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
    </div>
  );
}
