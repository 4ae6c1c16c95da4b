import { sleep } from '../helpers/wait.js';
import { api, eventually } from '../webhooks/helpers.js';

export { api, eventually };

/** A product document with one fact a caller asks about. */
export const DOCUMENT =
  'Acme Notes is a note taking service for small teams. The premium plan costs 4.99 euros per month and includes ' +
  'unlimited notebooks. Notes are kept in data centres in Frankfurt. The support team answers emails within two days.';

/** Runs scenarios and waits for the run to end; answers the run with its results. */
export async function runScenarios(
  url: string,
  secret: string,
  assistantId: string,
  body: Record<string, unknown> = {},
  timeoutMs = 60_000,
): Promise<{ run: any; results: any[] }> {
  const started = await api(url, 'POST', `/api/v1/assistants/${assistantId}/scenario-runs`, secret, body);
  if (started.status !== 202) throw new Error(`run refused: ${started.status} ${started.text}`);
  return waitForRun(url, secret, assistantId, started.body.run.id, timeoutMs);
}

/** Polls a run until it ends; answers the run with its results. */
export async function waitForRun(
  url: string,
  secret: string,
  assistantId: string,
  runId: string,
  timeoutMs = 60_000,
): Promise<{ run: any; results: any[] }> {
  const path = `/api/v1/assistants/${assistantId}/scenario-runs/${runId}`;
  // Polled every 500 ms (an API key's rate limit counts every read).
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(url, 'GET', path, secret);
    if (res.status !== 200) throw new Error(`reading the run: ${res.status} ${res.text}`);
    if (res.body.run.status !== 'running') return res.body;
    if (Date.now() > deadline) throw new Error(`timed out waiting for the scenario run: ${res.text.slice(0, 2000)}`);
    await sleep(500);
  }
}
