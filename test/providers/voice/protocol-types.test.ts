import t from 'tap';
import ts from 'typescript';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { Recorder, pump, silentFrame, simProvider, startSim, voicedFrame, waitFor } from './helpers.js';

/**
 * Type-level contract: the frames that actually crossed the wire in a full session (simulator -> adapter and
 * adapter -> simulator, including the string-built audio appends) are pasted into a TypeScript module as object
 * literals typed `ServerEvent[]` / `ClientEvent[]` from the `openai` package and compiled. Excess-property and
 * discriminated-union checks then prove the simulator and the adapter speak the published protocol, not a
 * private dialect. A negative control proves the check can fail.
 */

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');

/** Typecheck in-memory modules in one program with the project's compiler options; diagnostics per module. */
function compile(sources: Record<string, string>): Record<string, string[]> {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const options: ts.CompilerOptions = { ...parsed.options, noEmit: true, sourceMap: false };
  const files = new Map(Object.entries(sources).map(([name, text]) => [join(here, `__wire_${name}__.ts`), text]));
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, onError) => {
    const text = files.get(name);
    return text === undefined ? getSourceFile(name, lang, onError) : ts.createSourceFile(name, text, lang);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => files.has(name) || fileExists(name);
  const program = ts.createProgram([...files.keys()], options, host);
  const result: Record<string, string[]> = {};
  for (const [name, path] of Object.keys(sources).map((n) => [n, join(here, `__wire_${n}__.ts`)] as const)) {
    result[name] = ts
      .getPreEmitDiagnostics(program, program.getSourceFile(path))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }
  return result;
}

function module(server: string[], client: string[]): string {
  return [
    "import type { ClientEvent, ServerEvent } from 'openai/resources/live/live';",
    `export const server: ServerEvent[] = [\n${server.join(',\n')}\n];`,
    `export const client: ClientEvent[] = [\n${client.join(',\n')}\n];`,
  ].join('\n');
}

/** A few of each frame type, so the compiled module stays small. */
function sample(frames: string[], perType = 2): string[] {
  const counts = new Map<string, number>();
  return frames.filter((frame) => {
    const type = (JSON.parse(frame) as { type: string }).type;
    const n = counts.get(type) ?? 0;
    counts.set(type, n + 1);
    return n < perType;
  });
}

t.test('every frame on the wire satisfies the openai ServerEvent / ClientEvent types', async (t) => {
  const sim = await startSim(t, { recordWire: true });
  const rec = new Recorder();
  const session = await simProvider(sim).startSession(
    {
      instructions: 'Help. [sim:delegate]',
      voice: 'marin',
      delegation: { type: 'client', acknowledgementDelayMs: 200 },
    },
    { handlers: rec },
  );
  session.mute();
  session.unmute();
  session.appendInstructions('Short answers.');
  session.appendThinking('Checking hours.');
  await pump((p) => session.sendAudio(p), voicedFrame(), 10);
  await pump((p) => session.sendAudio(p), silentFrame(), 5);
  await waitFor(() => rec.delegations.length === 1 && rec.usage.length >= 1, 'delegation and usage');
  session.appendCommentary('Nine to five.', rec.delegations[0]!.id);
  await waitFor(() => rec.output.length === 3 && rec.audio.length >= 6, 'spoken answer');
  await session.close();
  const record = sim.stats.sessions.get(session.id)!;

  const server = sample(record.wireOut);
  const client = sample(record.wireIn);
  const serverTypes = new Set(server.map((f) => (JSON.parse(f) as { type: string }).type));
  const clientTypes = new Set(client.map((f) => (JSON.parse(f) as { type: string }).type));
  t.same(
    [...serverTypes].sort(),
    [
      'session.closed',
      'session.commentary.appended',
      'session.delegation.created',
      'session.input_audio.muted',
      'session.input_audio.unmuted',
      'session.input_transcript.delta',
      'session.instructions.appended',
      'session.output_audio.delta',
      'session.output_transcript.delta',
      'session.started',
      'session.thinking.appended',
      'session.usage.updated',
    ],
    'the session exercised every server event the simulator emits in a call',
  );
  t.same(
    [...clientTypes].sort(),
    [
      'session.close',
      'session.commentary.append',
      'session.input_audio.append',
      'session.input_audio.mute',
      'session.input_audio.unmute',
      'session.instructions.append',
      'session.start',
      'session.thinking.append',
    ],
    'and every command the adapter sends',
  );

  const drifted = module(
    [
      '{"type":"session.output_audio.delta","delta":1}',
      '{"type":"session.usage.updated","event_id":"e","usage":{"secs":1}}',
    ],
    ['{"type":"session.input_audio.append","pcm":"AAAA"}'],
  );
  const diagnostics = compile({ wire: module(server, client), drifted });
  t.same(diagnostics.wire, [], 'no type errors in what crossed the wire');
  t.ok(
    diagnostics.drifted!.length >= 3,
    `negative control: drifted frames fail to compile (${diagnostics.drifted!.length} errors)`,
  );
});
