import { useState } from 'preact/hooks';
import { v1 } from '../api/client.js';
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

type PhoneNumber = Awaited<ReturnType<typeof listNumbers>>['phoneNumbers'][number];
type AssistantOption = { id: string; name: string };

const listNumbers = () => v1.GET('/api/v1/phone-numbers');

/**
 * Phone numbers: a carrier (Twilio) number routed to an assistant. Add one with the carrier account's SID and auth
 * token (write-only: it is never shown again), paste the voice URL into the carrier's console, delete it.
 */
export function PhoneNumbersPage() {
  const load = useLoad(async () => {
    const [numbers, assistants] = await Promise.all([
      listNumbers(),
      v1.GET('/api/v1/assistants', { params: { query: { limit: 100 } } }),
    ]);
    return {
      numbers: numbers.phoneNumbers,
      assistants: assistants.assistants.map((a): AssistantOption => ({ id: a.id, name: a.name })),
    };
  }, []);
  const [added, setAdded] = useState<PhoneNumber | null>(null);
  return (
    <section>
      <h1 tabIndex={-1}>Phone numbers</h1>
      <p class="muted">
        Calls to a number added here are answered by its assistant. Set the number's voice webhook (HTTP POST) in your
        carrier's console to the voice URL shown. The auth token checks that every call really comes from the carrier;
        Parley stores it encrypted and never shows it again.
      </p>
      {added && (
        <div class="card" role="region" aria-label="Number added">
          <h2>{added.phoneNumber} is ready</h2>
          <p>Paste this voice URL as the number's voice webhook (HTTP POST) in your carrier's console:</p>
          <p>
            <code aria-label="Voice URL">{added.voiceUrl}</code>
          </p>
          <CopyButton text={added.voiceUrl} label="Copy voice URL" />{' '}
          <button type="button" onClick={() => setAdded(null)}>
            Done
          </button>
        </div>
      )}
      <Loaded load={load} label="Loading phone numbers…">
        {({ numbers, assistants }) => (
          <>
            <AddNumberForm
              assistants={assistants}
              onAdded={(n) => {
                setAdded(n);
                void load.reload();
              }}
            />
            <section class="card" aria-labelledby="numbers-h">
              <h2 id="numbers-h">Numbers</h2>
              {numbers.length === 0 ? (
                <Empty>
                  <p>No phone numbers yet.</p>
                </Empty>
              ) : (
                <Table columns={['Number', 'Assistant', 'Voice URL', 'Added', <span class="sr-only">Actions</span>]}>
                  {numbers.map((n) => (
                    <tr>
                      <td>{n.phoneNumber}</td>
                      <td>{assistants.find((a) => a.id === n.assistantId)?.name ?? n.assistantId}</td>
                      <td>
                        <code>{n.voiceUrl}</code> <CopyButton text={n.voiceUrl} label="Copy" />
                      </td>
                      <td>{dateTime(n.createdAt)}</td>
                      <td>
                        <ConfirmButton
                          label="Delete"
                          name={`Delete ${n.phoneNumber}`}
                          confirmLabel="Yes, delete"
                          question={`Delete ${n.phoneNumber}? Calls to it are rejected from now on.`}
                          onConfirm={async () => {
                            await v1.DELETE('/api/v1/phone-numbers/{phoneNumberId}', {
                              params: { path: { phoneNumberId: n.id } },
                            });
                            if (added?.id === n.id) setAdded(null);
                            await load.reload();
                          }}
                        />
                      </td>
                    </tr>
                  ))}
                </Table>
              )}
            </section>
          </>
        )}
      </Loaded>
    </section>
  );
}

function AddNumberForm({
  assistants,
  onAdded,
}: {
  assistants: AssistantOption[];
  onAdded: (number: PhoneNumber) => void;
}) {
  const empty = { phoneNumber: '', assistantId: assistants[0]?.id ?? '', accountSid: '', authToken: '' };
  const [form, setForm] = useState(empty);
  const add = useAction(async () => {
    const created = await v1.POST('/api/v1/phone-numbers', {
      body: {
        phoneNumber: form.phoneNumber.trim(),
        assistantId: form.assistantId,
        provider: 'twilio',
        accountSid: form.accountSid.trim(),
        authToken: form.authToken,
      },
    });
    setForm(empty);
    onAdded(created);
  });
  const invalid = (field: string) => fieldIssues(add.error).some((i) => i.field === field);
  const field = (name: keyof typeof form, label: string, props: Record<string, unknown> = {}) => (
    <>
      <label>
        {label}
        <input
          required
          value={form[name]}
          onInput={(e) => setForm({ ...form, [name]: e.currentTarget.value })}
          aria-invalid={invalid(name)}
          aria-describedby={fieldErrorId(name)}
          {...props}
        />
      </label>
      <FieldError error={add.error} field={name} />
    </>
  );
  if (assistants.length === 0)
    return (
      <Empty>
        <p>Create an assistant first: a phone number is answered by one.</p>
      </Empty>
    );
  return (
    <form
      class="card form"
      aria-label="Add a phone number"
      onSubmit={(e) => {
        e.preventDefault();
        void add.run();
      }}
    >
      <h2>Add a phone number</h2>
      {field('phoneNumber', 'Phone number (E.164)', { placeholder: '+15550100123', inputMode: 'tel' })}
      <label>
        Assistant
        <select value={form.assistantId} onChange={(e) => setForm({ ...form, assistantId: e.currentTarget.value })}>
          {assistants.map((a) => (
            <option value={a.id}>{a.name}</option>
          ))}
        </select>
      </label>
      <FieldError error={add.error} field="assistantId" />
      {field('accountSid', 'Carrier account SID', { placeholder: 'AC…', autoComplete: 'off', spellcheck: false })}
      {field('authToken', 'Carrier auth token', { type: 'password', autoComplete: 'new-password' })}
      <p class="muted">The auth token is write-only: it is stored encrypted and never shown again.</p>
      <ErrorBox error={add.error} title="Could not add the number" />
      <div class="actions">
        <button type="submit" class="primary" disabled={add.busy}>
          {add.busy ? 'Adding…' : 'Add number'}
        </button>
      </div>
    </form>
  );
}
