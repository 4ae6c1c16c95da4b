import { useState } from 'preact/hooks';
import type { Assistant } from '../api/client.js';
import { dashboardApi, type EvalCase, type EvalRun } from '../api/dashboard-routes.js';
import { ErrorBox, Loaded, StatusBadge, Table, useAction, useLoad, usePoll } from '../ui/components.js';
import { dollars, percent } from '../ui/format.js';
import { href } from '../router.js';

/** Evals: questions with expected answers, run like chat turns and scored. Only plans with evals may run them. */
export function EvalsTab({ assistant }: { assistant: Assistant }) {
  const limits = useLoad(() => dashboardApi.usageLimits(), []);
  return (
    <section class="card" aria-labelledby="ev-h">
      <h2 id="ev-h">Evals</h2>
      <Loaded load={limits} label="Checking your plan…">
        {({ limits: l }) =>
          l.evalsEnabled ? (
            <EvalRunner assistant={assistant} />
          ) : (
            <div class="upgrade" role="note">
              <p>
                <strong>Evals are not part of the {l.planCode} plan.</strong> They come with the Pro and Business plans:
                run a set of questions against this assistant and score its answers against what you expect.
              </p>
              {l.billingConfigured ? (
                <p>
                  <a class="button primary" href={href('/billing')}>
                    See plans and upgrade
                  </a>
                </p>
              ) : (
                <p>
                  Plans are not sold on this server: an operator changes an account&rsquo;s plan in Admin. To become
                  one, run <code>npm run cli -- admin:grant --email you@example.com</code> on the server; or set{' '}
                  <code>SELF_HOSTED=true</code> there to lift plan limits altogether.
                </p>
              )}
            </div>
          )
        }
      </Loaded>
    </section>
  );
}

/** "question | expected answer" per line; the expected part is optional. */
function parseCases(text: string): Array<{ question: string; expected?: string }> {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [question, ...rest] = line.split('|');
      const expected = rest.join('|').trim();
      return { question: question!.trim(), ...(expected ? { expected } : {}) };
    });
}

function EvalRunner({ assistant }: { assistant: Assistant }) {
  const [text, setText] = useState('');
  const [run, setRun] = useState<{ eval: EvalRun; cases: EvalCase[] } | null>(null);
  const start = useAction(async () => {
    const started = await dashboardApi.startEval(assistant.id, parseCases(text));
    setRun({ eval: started.eval, cases: [] });
  });
  const active = run !== null && (run.eval.status === 'queued' || run.eval.status === 'running');
  usePoll(active, 1500, () => {
    if (run) dashboardApi.getEval(assistant.id, run.eval.id).then(setRun, () => undefined);
  });
  return (
    <>
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          void start.run();
        }}
      >
        <label>
          Cases <span class="muted">(one per line: question | expected answer; up to 50)</span>
          <textarea
            rows={6}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            placeholder="What are your opening hours? | 9 to 5, Monday to Friday"
          />
        </label>
        <ErrorBox error={start.error} title="Could not start the eval" />
        <div class="actions">
          <button type="submit" class="primary" disabled={start.busy || active || parseCases(text).length === 0}>
            Run eval
          </button>
        </div>
      </form>
      {run && (
        <div aria-live="polite">
          <p>
            <StatusBadge status={run.eval.status} /> {run.eval.completedCount} of {run.eval.caseCount} cases · average
            score {percent(run.eval.averageScore)} · cost {dollars(run.eval.costMicros)}
          </p>
          {run.eval.error && <p class="doc-error">Stopped: {run.eval.error.message}</p>}
          {run.cases.length > 0 && (
            <Table columns={['Question', 'Expected', 'Answer', 'Score']}>
              {run.cases.map((c) => (
                <tr>
                  <td>{c.question}</td>
                  <td>{c.expected ?? '—'}</td>
                  <td>{c.status === 'pending' ? 'Pending…' : (c.error ?? c.answer ?? '—')}</td>
                  <td>{percent(c.score)}</td>
                </tr>
              ))}
            </Table>
          )}
        </div>
      )}
    </>
  );
}
