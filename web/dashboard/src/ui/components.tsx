import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { describeError, ParleyError } from '../api/client.js';

/** An API failure as a person can act on it: the server's sentence, its code and the request id to quote. */
/** The fields a VALIDATION_FAILED answer named (`body.scopes` -> `scopes`), each with why, in the server's words. */
export function fieldIssues(error: unknown): Array<{ field: string; message: string }> {
  if (!(error instanceof ParleyError) || error.code !== 'VALIDATION_FAILED') return [];
  const issues = (error.details as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues)) return [];
  return issues.flatMap((i: { path?: unknown; message?: unknown }) =>
    typeof i.path === 'string' && typeof i.message === 'string'
      ? [{ field: i.path.replace(/^(body|query|path|params)\.?/, ''), message: i.message }]
      : [],
  );
}

const sentence = (s: string) => (s.length > 0 ? s[0]!.toUpperCase() + s.slice(1) : s);

/**
 * Why the server refused this field, shown beside it (give the input `aria-describedby={fieldErrorId(field)}`).
 * Matches the field and anything inside it (`pairs` shows `pairs.0.answer`).
 */
export function FieldError({ error, field }: { error: unknown; field: string }) {
  const mine = fieldIssues(error).filter((i) => i.field === field || i.field.startsWith(`${field}.`));
  if (mine.length === 0) return null;
  return (
    <p class="field-error" id={fieldErrorId(field)}>
      {mine
        .map((i) => sentence(i.field === field ? i.message : `${i.field.slice(field.length + 1)} ${i.message}`))
        .join('. ')}
    </p>
  );
}

export function fieldErrorId(field: string): string {
  return `field-error-${field.replace(/[^A-Za-z0-9_-]/g, '-')}`;
}

export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (error === undefined || error === null) return null;
  const d = describeError(error);
  const issues = fieldIssues(error);
  return (
    <div class="error" role="alert">
      <strong>{title ?? 'Something went wrong'}:</strong>{' '}
      {issues.length > 0 ? 'these fields need a change.' : d.message}
      {issues.length > 0 && (
        <ul class="error-fields">
          {issues.map((i) => (
            <li>
              {i.field ? <strong>{i.field}</strong> : null} {i.message}
            </li>
          ))}
        </ul>
      )}
      {(d.code || d.requestId) && (
        <div class="error-meta">
          {d.code && <span>Code {d.code}</span>}
          {d.requestId && (
            <span>
              Request id <code>{d.requestId}</code>
            </span>
          )}
        </div>
      )}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      {label}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export type Load<T> = { state: 'loading' } | { state: 'error'; error: unknown } | { state: 'ready'; data: T };

/** Loads on mount and whenever `deps` change; `reload()` fetches again, keeping the old data on screen meanwhile. */
export function useLoad<T>(
  fn: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
): Load<T> & { reload: () => Promise<void> } {
  const [load, setLoad] = useState<Load<T>>({ state: 'loading' });
  const latest = useRef(0);
  const run = useCallback(async () => {
    const id = ++latest.current;
    const ctl = new AbortController();
    try {
      const data = await fn(ctl.signal);
      if (id === latest.current) setLoad({ state: 'ready', data });
    } catch (error) {
      if (id === latest.current) setLoad({ state: 'error', error });
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(() => {
    setLoad({ state: 'loading' });
    void run();
    return () => void latest.current++;
  }, [run]);
  return { ...load, reload: run };
}

/** Renders loading / error / ready for a Load. */
export function Loaded<T>({
  load,
  children,
  label,
}: {
  load: Load<T>;
  children: (data: T) => ComponentChildren;
  label?: string;
}) {
  if (load.state === 'loading') return <Loading {...(label ? { label } : {})} />;
  if (load.state === 'error') return <ErrorBox error={load.error} title="Could not load" />;
  return <>{children(load.data)}</>;
}

/** Runs an action once at a time, remembering its error. */
export function useAction<A extends unknown[]>(fn: (...args: A) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (...args: A) => {
    if (busy) return;
    setBusy(true);
    setError(undefined);
    try {
      await fn(...args);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, setError };
}

/**
 * A destructive action behind a second, explicit click: "Delete" shows what will happen with "Yes, delete" and
 * "Cancel" (focus moves to Cancel, so Enter never confirms by accident).
 */
export function ConfirmButton(props: {
  label: string;
  confirmLabel: string;
  question: string;
  onConfirm: () => Promise<void>;
  name?: string;
}) {
  const [asking, setAsking] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  const action = useAction(async () => {
    await props.onConfirm();
    setAsking(false);
  });
  useEffect(() => {
    if (asking) cancel.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" class="danger-outline" aria-label={props.name} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <div class="confirm" role="group" aria-label={props.question}>
      <p>{props.question}</p>
      <button type="button" class="danger" disabled={action.busy} onClick={() => void action.run()}>
        {action.busy ? 'Working…' : props.confirmLabel}
      </button>
      <button type="button" ref={cancel} onClick={() => setAsking(false)}>
        Cancel
      </button>
      <ErrorBox error={action.error} />
    </div>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone('copied');
    } catch {
      setDone('failed');
    }
  };
  return (
    <>
      <button type="button" onClick={() => void copy()}>
        {label}
      </button>
      <span class="copy-status" role="status" aria-live="polite">
        {done === 'copied' ? 'Copied' : done === 'failed' ? 'Copy failed: select the text and copy it' : ''}
      </span>
    </>
  );
}

/** Status chip of a document or eval. */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

/** Calls `tick` every `ms` while `active`. */
export function usePoll(active: boolean, ms: number, tick: () => void): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => latest.current(), ms);
    return () => clearInterval(timer);
  }, [active, ms]);
}

/** The passages an answer used: document name and the quoted snippet. */
export function SourceList({
  sources,
  open = false,
}: {
  sources: ReadonlyArray<{ name: string; snippet: string }>;
  open?: boolean;
}) {
  if (sources.length === 0) return null;
  return (
    <details class="sources" open={open}>
      <summary>Sources ({sources.length})</summary>
      <ul>
        {sources.map((s) => (
          <li>
            <strong>{s.name}</strong>
            <blockquote>{s.snippet}</blockquote>
          </li>
        ))}
      </ul>
    </details>
  );
}

/** A table that scrolls sideways inside its card on narrow screens; `columns` are the header cells. */
export function Table({
  columns,
  label,
  children,
}: {
  columns: ComponentChildren[];
  label?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table aria-label={label}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col">{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
