import { spawn } from 'node:child_process';
import type { Test } from 'tap';
import { serverCommand } from '../helpers/server-command.js';

/** A Parley process (src/main.ts, or its build) with only the given environment; SIGKILLed at teardown if still up. */
export interface ParleyProcess {
  base: Promise<string>;
  exited: Promise<{ code: number | null; at: number }>;
  output(): string;
  signal(name: NodeJS.Signals): number;
}

export function startParley(t: Test, env: Record<string, string>): ParleyProcess {
  const child = spawn(process.execPath, serverCommand('main'), {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'info', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('exit', (code) => resolve({ code, at: Date.now() })),
  );
  t.teardown(() => void child.kill('SIGKILL'));
  const base = new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const line = out.split('\n').find((l) => l.includes('"parley listening"'));
      if (line === undefined) return;
      clearInterval(timer);
      resolve(`http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`);
    }, 25);
    void exited.then(({ code }) => {
      clearInterval(timer);
      reject(new Error(`exited ${code}\n${out}`));
    });
  });
  return {
    base,
    exited,
    output: () => out,
    signal: (name) => {
      child.kill(name);
      return Date.now();
    },
  };
}

/** Signs up (SIGNUP_ENABLED), creates an assistant and an API key with the chat scope. */
export async function ownerWithAssistant(
  base: string,
): Promise<{ assistantId: string; apiKey: string; cookie: string }> {
  const signup = await fetch(`${base}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'owner@example.com', password: 'correct horse battery staple' }),
  });
  if (signup.status !== 201) throw new Error(`signup ${signup.status}: ${await signup.text()}`);
  const cookie = (signup.headers.get('set-cookie') ?? '').split(';')[0]!;
  const headers = { 'content-type': 'application/json', cookie, origin: base };
  const created = await fetch(`${base}/api/v1/assistants`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Support', instructions: 'Answer from the documents.' }),
  });
  if (created.status !== 201) throw new Error(`assistant ${created.status}: ${await created.text()}`);
  const { assistant } = (await created.json()) as { assistant: { id: string } };
  const key = await fetch(`${base}/api/account/keys`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'probe', scopes: ['chat', 'assistants:read'] }),
  });
  if (key.status !== 201) throw new Error(`key ${key.status}: ${await key.text()}`);
  const { secret } = (await key.json()) as { secret: string };
  return { assistantId: assistant.id, apiKey: secret, cookie };
}
