import { useState } from 'preact/hooks';
import { v1, type Assistant, type DocumentRecord } from '../api/client.js';
import { dashboardApi, type SourceInput } from '../api/dashboard-routes.js';
import { ConfirmButton, Empty, ErrorBox, Loaded, StatusBadge, useAction, useLoad, usePoll } from '../ui/components.js';
import { count, dateTime } from '../ui/format.js';

const ACCEPT = '.txt,.md,.markdown,.html,.htm,.pdf,text/plain,text/markdown,text/html,application/pdf';

/** An assistant's knowledge: uploads (picker and drag-and-drop), URL/text/FAQ sources, live status, reprocess, delete. */
export function DocumentsTab({ assistant }: { assistant: Assistant }) {
  const load = useLoad(
    () => v1.GET('/api/v1/documents', { params: { query: { assistantId: assistant.id, limit: 100 } } }),
    [assistant.id],
  );
  const documents = load.state === 'ready' ? load.data.documents : [];
  // Live status: poll while anything is still being processed.
  usePoll(
    documents.some((d) => d.status === 'pending' || d.status === 'processing'),
    1500,
    () => void load.reload(),
  );

  return (
    <div class="stack">
      <Uploader assistantId={assistant.id} onAdded={() => void load.reload()} />
      <SourceForm assistantId={assistant.id} onAdded={() => void load.reload()} />
      <section class="card" aria-labelledby="docs-h">
        <h2 id="docs-h">Documents</h2>
        <Loaded load={load} label="Loading documents…">
          {(page) =>
            page.documents.length === 0 ? (
              <Empty>
                <p>No documents yet. Upload a file or add a source above; the assistant answers from them.</p>
              </Empty>
            ) : (
              <ul class="doc-list">
                {page.documents.map((d) => (
                  <DocumentRow key={d.id} doc={d} onChanged={() => void load.reload()} />
                ))}
              </ul>
            )
          }
        </Loaded>
      </section>
    </div>
  );
}

function DocumentRow({ doc, onChanged }: { doc: DocumentRecord; onChanged: () => void }) {
  const reprocess = useAction(async () => {
    await v1.POST('/api/v1/documents/{documentId}/reprocess', { params: { path: { documentId: doc.id } }, body: {} });
    onChanged();
  });
  return (
    <li class="doc" aria-label={`${doc.name}: ${doc.status}`}>
      <div class="doc-main">
        <strong class="doc-name">{doc.name}</strong> <StatusBadge status={doc.status} />
        <div class="muted">
          {doc.type}
          {doc.sourceUrl ? ` · ${doc.sourceUrl}` : ''} · {count(doc.chunkCount, 'passage')} · updated{' '}
          {dateTime(doc.updatedAt)}
        </div>
        {doc.error && (
          <p class={doc.status === 'failed' ? 'doc-error' : 'muted'}>
            {doc.status === 'failed' ? 'Failed: ' : 'Retrying after: '}
            {doc.error}
          </p>
        )}
      </div>
      <div class="doc-actions">
        <button
          type="button"
          aria-label={`Reprocess ${doc.name}`}
          disabled={reprocess.busy}
          onClick={() => void reprocess.run()}
        >
          Reprocess
        </button>
        <ConfirmButton
          label="Delete"
          name={`Delete ${doc.name}`}
          confirmLabel="Yes, delete"
          question={`Delete “${doc.name}”? The assistant stops using it.`}
          onConfirm={async () => {
            await v1.DELETE('/api/v1/documents/{documentId}', { params: { path: { documentId: doc.id } } });
            onChanged();
          }}
        />
      </div>
      <ErrorBox error={reprocess.error} />
    </li>
  );
}

function Uploader({ assistantId, onAdded }: { assistantId: string; onAdded: () => void }) {
  const [dragging, setDragging] = useState(false);
  const [progress, setProgress] = useState<string>('');
  const upload = useAction(async (files: File[]) => {
    for (const [i, file] of files.entries()) {
      setProgress(`Uploading ${file.name} (${i + 1} of ${files.length})…`);
      await dashboardApi.upload(assistantId, file);
      onAdded();
    }
    setProgress(files.length === 1 ? `Uploaded ${files[0]!.name}.` : `Uploaded ${files.length} files.`);
  });
  const take = (list: FileList | null | undefined) => {
    const files = list ? [...list] : [];
    if (files.length > 0) void upload.run(files);
  };
  return (
    <section class="card" aria-labelledby="upload-h">
      <h2 id="upload-h">Upload files</h2>
      <div
        class={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          take(e.dataTransfer?.files);
        }}
      >
        <p>Drop text, Markdown, HTML or PDF files here, or</p>
        <label class="file-label">
          Choose files to upload
          <input
            type="file"
            multiple
            accept={ACCEPT}
            disabled={upload.busy}
            onChange={(e) => {
              take(e.currentTarget.files);
              e.currentTarget.value = '';
            }}
          />
        </label>
      </div>
      <p role="status" aria-live="polite" class="muted">
        {progress}
      </p>
      <ErrorBox error={upload.error} title="Upload failed" />
    </section>
  );
}

type SourceKind = 'url' | 'text' | 'faq';

function SourceForm({ assistantId, onAdded }: { assistantId: string; onAdded: () => void }) {
  const [kind, setKind] = useState<SourceKind>('url');
  const [url, setUrl] = useState('');
  const [name, setName] = useState('');
  const [text, setText] = useState('');
  const [pairs, setPairs] = useState([{ question: '', answer: '' }]);
  const add = useAction(async () => {
    let source: SourceInput;
    if (kind === 'url') source = { type: 'url', url: url.trim() };
    else if (kind === 'text') source = { type: 'text', name: name.trim(), text };
    else source = { type: 'faq', name: name.trim(), pairs: pairs.filter((p) => p.question.trim() && p.answer.trim()) };
    await dashboardApi.addSource(assistantId, source);
    setUrl('');
    setText('');
    setName('');
    setPairs([{ question: '', answer: '' }]);
    onAdded();
  });
  return (
    <form
      class="card form"
      aria-label="Add a source"
      onSubmit={(e) => {
        e.preventDefault();
        void add.run();
      }}
    >
      <h2>Add a source</h2>
      <fieldset class="segmented">
        <legend>Source type</legend>
        {(['url', 'text', 'faq'] as const).map((k) => (
          <label class="check">
            <input type="radio" name="source-kind" value={k} checked={kind === k} onChange={() => setKind(k)} />
            {k === 'url' ? 'Web page (URL)' : k === 'text' ? 'Text' : 'FAQ'}
          </label>
        ))}
      </fieldset>
      {kind === 'url' ? (
        <label>
          URL
          <input
            type="url"
            required
            placeholder="https://example.com/help"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </label>
      ) : (
        <label>
          Source name
          <input required maxLength={300} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
      )}
      {kind === 'text' && (
        <label>
          Text
          <textarea rows={6} required value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
      )}
      {kind === 'faq' && (
        <div class="faq">
          {pairs.map((p, i) => (
            <fieldset>
              <legend>Question {i + 1}</legend>
              <label>
                Question
                <input
                  value={p.question}
                  onInput={(e) =>
                    setPairs(pairs.map((q, j) => (j === i ? { ...q, question: e.currentTarget.value } : q)))
                  }
                />
              </label>
              <label>
                Answer
                <textarea
                  rows={2}
                  value={p.answer}
                  onInput={(e) =>
                    setPairs(pairs.map((q, j) => (j === i ? { ...q, answer: e.currentTarget.value } : q)))
                  }
                />
              </label>
              {pairs.length > 1 && (
                <button
                  type="button"
                  aria-label={`Remove question ${i + 1}`}
                  onClick={() => setPairs(pairs.filter((_, j) => j !== i))}
                >
                  Remove
                </button>
              )}
            </fieldset>
          ))}
          <button type="button" onClick={() => setPairs([...pairs, { question: '', answer: '' }])}>
            Add another question
          </button>
        </div>
      )}
      <ErrorBox error={add.error} title="Could not add the source" />
      <div class="actions">
        <button type="submit" class="primary" disabled={add.busy}>
          {add.busy ? 'Adding…' : 'Add source'}
        </button>
      </div>
    </form>
  );
}
