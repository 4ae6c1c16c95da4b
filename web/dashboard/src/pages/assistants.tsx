import { useState } from 'preact/hooks';
import { v1, type Assistant } from '../api/client.js';
import { Empty, ErrorBox, Loaded, useAction, useLoad } from '../ui/components.js';
import { dateTime } from '../ui/format.js';
import { href, navigate } from '../router.js';

export function AssistantsPage() {
  const [extra, setExtra] = useState<{ items: Assistant[]; cursor: string | null } | null>(null);
  const load = useLoad(async () => {
    setExtra(null);
    return v1.GET('/api/v1/assistants', { params: { query: { limit: 50 } } });
  }, []);
  const more = useAction(async (cursor: string) => {
    const page = await v1.GET('/api/v1/assistants', { params: { query: { limit: 50, cursor } } });
    setExtra((e) => ({ items: [...(e?.items ?? []), ...page.assistants], cursor: page.nextCursor }));
  });
  const [creating, setCreating] = useState(false);

  return (
    <section>
      <div class="page-head">
        <h1 tabIndex={-1}>Assistants</h1>
        {!creating && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New assistant
          </button>
        )}
      </div>
      {creating && <NewAssistantForm onCancel={() => setCreating(false)} />}
      <Loaded load={load} label="Loading assistants…">
        {(page) => {
          const items = [...page.assistants, ...(extra?.items ?? [])];
          const cursor = extra ? extra.cursor : page.nextCursor;
          if (items.length === 0) {
            return (
              <Empty>
                <p>
                  No assistants yet. Create one, give it documents, then try it in the playground and embed it on your
                  site.
                </p>
              </Empty>
            );
          }
          return (
            <>
              <ul class="cards">
                {items.map((a) => (
                  <li class="card">
                    <h2>
                      <a href={href(`/assistants/${encodeURIComponent(a.publicId)}`)}>{a.name}</a>
                    </h2>
                    {a.description && <p>{a.description}</p>}
                    <p class="muted">
                      <code>{a.publicId}</code> · updated {dateTime(a.updatedAt)}
                    </p>
                    <p class="links">
                      <a
                        href={href(`/assistants/${encodeURIComponent(a.publicId)}/documents`)}
                        aria-label={`Documents of ${a.name}`}
                      >
                        Documents
                      </a>
                      <a
                        href={href(`/assistants/${encodeURIComponent(a.publicId)}/playground`)}
                        aria-label={`Playground of ${a.name}`}
                      >
                        Playground
                      </a>
                      <a
                        href={href(`/assistants/${encodeURIComponent(a.publicId)}/conversations`)}
                        aria-label={`Conversations of ${a.name}`}
                      >
                        Conversations
                      </a>
                    </p>
                  </li>
                ))}
              </ul>
              {cursor && (
                <button type="button" disabled={more.busy} onClick={() => void more.run(cursor)}>
                  Load more assistants
                </button>
              )}
              <ErrorBox error={more.error} />
            </>
          );
        }}
      </Loaded>
    </section>
  );
}

function NewAssistantForm({ onCancel }: { onCancel: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [instructions, setInstructions] = useState('');
  const create = useAction(async () => {
    const { assistant } = await v1.POST('/api/v1/assistants', {
      body: {
        name: name.trim(),
        ...(description.trim() ? { description: description.trim() } : {}),
        ...(instructions.trim() ? { instructions: instructions.trim() } : {}),
      },
    });
    navigate(`/assistants/${encodeURIComponent(assistant.publicId)}`);
  });
  return (
    <form
      class="card form"
      aria-label="New assistant"
      onSubmit={(e) => {
        e.preventDefault();
        void create.run();
      }}
    >
      <h2>New assistant</h2>
      <label>
        Name
        <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} autoFocus />
      </label>
      <label>
        Description <span class="muted">(optional)</span>
        <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Instructions <span class="muted">(optional; how it should answer)</span>
        <textarea rows={4} value={instructions} onInput={(e) => setInstructions(e.currentTarget.value)} />
      </label>
      <ErrorBox error={create.error} title="Could not create the assistant" />
      <div class="actions">
        <button type="submit" class="primary" disabled={create.busy || name.trim() === ''}>
          {create.busy ? 'Creating…' : 'Create assistant'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
