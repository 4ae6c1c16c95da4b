import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quickstart } from '../../examples/sdk-quickstart.js';
import type { Scope } from '../../src/auth/index.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { runScript } from './helpers.js';

/**
 * The README's steps as a user runs them: a key with exactly the scopes the README's `key:create` grants, the SDK
 * quickstart, then the voice example's command (a child process) against the assistant it created.
 */
const README_SCOPES: Scope[] = [
  'chat',
  'voice',
  'assistants:read',
  'assistants:write',
  'documents:read',
  'documents:write',
  'conversations:read',
];

t.test('README: SDK quickstart, then the voice example command', async (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  t.ok(
    readme.includes(`key:create --email owner@example.com --scopes ${README_SCOPES.join(',')}`),
    'the README grants these scopes',
  );

  const app = await startTestApp(t);
  const owner = await createOwner(app.database.sql, { scopes: README_SCOPES });
  const lines: string[] = [];
  const result = await quickstart({ baseUrl: app.url, apiKey: owner.secret, print: (l) => lines.push(l) });
  t.match(lines[0], /^created SDK quickstart \(asst_/);
  t.ok(result.answer.answer.length > 0, 'a JSON answer');
  t.match(lines.join('\n'), /streamed \((answered|no_answer)\): \S/, 'a streamed answer');
  t.equal(result.messages.length, 4, 'two questions and two answers in the conversation');
  t.match(lines.join('\n'), /refused: 404 \w+ \(request \S+\)/, 'a refusal as ParleyError');
  t.equal(lines.at(-1), result.assistant.publicId, 'the public id is printed last');

  const dir = mkdtempSync(join(tmpdir(), 'parley-example-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const example = fileURLToPath(new URL('../../examples/voice-client.ts', import.meta.url));
  const out = join(dir, 'answer.wav');
  const run = await runScript(
    example,
    ['--base-url', app.url, '--assistant', result.assistant.publicId, '--out', out, '--tail-ms', '2500'],
    {
      env: { PARLEY_API_KEY: owner.secret },
    },
  );
  t.equal(run.code, 0, `the voice example exits 0 (${run.stderr.slice(-400)})`);
  const summary = JSON.parse(run.stdout) as {
    endReason: unknown;
    assistantBytesHeard: number;
    transcripts: Array<{ role: string }>;
  };
  t.equal(summary.endReason, null, 'ended by the client');
  t.ok(summary.assistantBytesHeard > 0, 'the assistant was heard');
  t.ok(summary.transcripts.some((x) => x.role === 'assistant'));
  t.ok(readFileSync(out).length > 44, 'answer.wav written');
});
