/**
 * The SDK in five calls: create an assistant, ask it something (JSON, then streamed), read the conversation back,
 * and see what a refusal looks like. Every path, parameter and body below is checked by the compiler against the
 * contract (sdk/src/generated/openapi.ts).
 *
 *   PARLEY_API_KEY=sk_live_... npx tsx examples/sdk-quickstart.ts [--base-url http://127.0.0.1:3000] [--instructions '...']
 *
 * The key needs the scopes assistants:write, chat and conversations:read. Prints the new assistant's public id last
 * (the voice example and the load test take it).
 */
import { fileURLToPath } from 'node:url';
import { createParleyClient, ParleyError, streamChat } from '../sdk/src/index.js';

export async function quickstart(options: {
  baseUrl: string;
  apiKey: string;
  instructions?: string;
  print?: (line: string) => void;
}) {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  // retry: 429 answers are retried after the Retry-After the server gives.
  const parley = createParleyClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, retry: true });

  const { assistant } = await parley.POST('/api/v1/assistants', {
    body: {
      name: 'SDK quickstart',
      instructions: options.instructions ?? 'Be brief and friendly.',
      settings: { voice: { enabled: true, recording: 'off', requireConsent: false } },
    },
  });
  print(`created ${assistant.name} (${assistant.publicId})`);

  const answer = await parley.POST('/api/v1/chat', {
    body: { assistantId: assistant.publicId, message: 'Hello! What can you do?' },
  });
  print(`answer: ${answer.answer}`);

  let streamed = '';
  for await (const event of streamChat(parley, {
    assistantId: assistant.publicId,
    message: 'And in one sentence?',
    conversationId: answer.conversationId,
  })) {
    if (event.type === 'token') streamed += event.text;
    if (event.type === 'meta') print(`streamed (${event.outcome}): ${streamed}`);
  }

  const { conversation, messages } = await parley.GET('/api/v1/conversations/{conversationId}', {
    params: { path: { conversationId: answer.conversationId } },
  });
  print(`conversation ${conversation.id}: ${messages.length} messages`);

  try {
    await parley.GET('/api/v1/assistants/{assistantId}', { params: { path: { assistantId: 'asst_doesnotexist' } } });
  } catch (err) {
    if (!(err instanceof ParleyError)) throw err;
    print(`refused: ${err.status} ${err.code} (request ${err.requestId})`);
  }
  print(assistant.publicId);
  return { assistant, answer, messages };
}

function argument(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const apiKey = argument(args, 'api-key') ?? process.env['PARLEY_API_KEY'];
  if (!apiKey) {
    process.stderr.write(
      'set PARLEY_API_KEY (or --api-key) to a key with assistants:write, chat and conversations:read\n',
    );
    process.exit(2);
  }
  const instructions = argument(args, 'instructions');
  quickstart({
    baseUrl: argument(args, 'base-url') ?? 'http://127.0.0.1:3000',
    apiKey,
    ...(instructions !== undefined ? { instructions } : {}),
  }).catch((err: unknown) => {
    process.stderr.write(`${err instanceof ParleyError ? `${err.status} ${err.code}: ${err.message}` : String(err)}\n`);
    process.exitCode = 1;
  });
}
