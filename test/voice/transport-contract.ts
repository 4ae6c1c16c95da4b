import type { Test } from 'tap';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestOwner } from '../helpers/identity.js';
import type { Assistant } from '../../src/assistants/index.js';
import {
  endWithKey,
  live,
  mintWithKey as mintByKey,
  ownerWithVoice,
  voiceAssistant,
  waitFor,
  type Minted,
} from './helpers.js';

/**
 * The contract every caller transport passes (src/voice/transports/<name>/): run it against a transport with
 * `transportContract(t, transport)`. A new transport is done when it passes. It checks what a caller and the account
 * notice: admission, presence (the caller connected / gone), billing only while a caller is connected, the playback
 * gate honoured, the end told to the caller with its reason, the call ending when the caller hangs up, and one
 * settlement per call. Real Parley, real Postgres and Redis, the GPT-Live simulator; real time, bounded.
 */
export interface CallerUnderTest {
  /** Caller audio, in the call's format: `frames` x 20 ms of speech a voice detector hears, or of silence. */
  speak(frames: number): void;
  silence(frames: number): void;
  /** Assistant audio this caller was given (bytes). */
  heardBytes(): number;
  /** The end as this caller was told it (its reason), once the transport said so and let go. */
  ended(): Promise<{ endReason: string | null }>;
  /** The caller goes away without ending the call (closes its connection, a dropped line). */
  hangUp(): void;
}

export interface TransportUnderTest {
  readonly name: string;
  /** What the mint answers under `stream` for this transport. */
  readonly stream: { protocol: string; url: RegExp };
  /** Starts a call for this transport (default: the mint route with an API key). */
  mint?(app: TestApp, owner: TestOwner, assistant: Assistant): Promise<Minted>;
  /** Connects as the caller of a minted call. */
  connect(app: TestApp, minted: Minted): Promise<CallerUnderTest>;
  /** Tries to connect with a credential that is not the call's; resolves with the refusal's HTTP status. */
  connectWithWrongCredential(app: TestApp, minted: Minted): Promise<number>;
}

const JOIN_TIMEOUT_SECONDS = 1;
const MEDIA_GRACE_MS = 400;

export function transportContract(t: Test, transport: TransportUnderTest): void {
  const mintWithKey = (app: TestApp, owner: TestOwner, assistant: Assistant) =>
    transport.mint ? transport.mint(app, owner, assistant) : mintByKey(app, owner, assistant);
  let shared: Promise<{ app: TestApp; owner: TestOwner }> | undefined;
  const setup = () =>
    (shared ??= (async () => {
      const app = await startTestApp(t, {
        env: { VOICE_JOIN_TIMEOUT_SECONDS: String(JOIN_TIMEOUT_SECONDS) },
        voice: { limits: { mediaGraceMs: MEDIA_GRACE_MS, quotaCheckEveryMs: 200 } },
      });
      return { app, owner: await ownerWithVoice(app) };
    })());

  const rowOf = async (app: TestApp, sessionId: string) => {
    const [row] = await app.database.sql<{ state: string; endReason: string | null; billableSeconds: number }[]>`
      select state, end_reason, billable_seconds from voice_sessions where id = ${sessionId}`;
    return row;
  };

  t.test(
    `${transport.name}: admission — the mint says how to connect; only the call's credential gets in`,
    async (t) => {
      const { app, owner } = await setup();
      const assistant = await voiceAssistant(app, owner);
      const minted = await mintWithKey(app, owner, assistant);
      t.match((minted as any).stream, transport.stream, "the mint answers this transport's stream");
      t.equal(await transport.connectWithWrongCredential(app, minted), 404, 'a wrong credential is refused (404)');
      t.notOk(live(app, minted.sessionId).joined, 'a refused connection is not a caller');
      await transport.connect(app, minted);
      await waitFor(() => live(app, minted.sessionId).joined || undefined, 'the caller to be present');
      t.pass('the call’s own credential connects, and the session sees its caller');
      await endWithKey(app, owner, minted.sessionId);
    },
  );

  t.test(`${transport.name}: the gate — no assistant audio reaches the caller while it is closed`, async (t) => {
    const { app, owner } = await setup();
    // The silent echo speaks back what it hears without a transcript, so the gate never opens for it.
    const silent = await voiceAssistant(app, owner, { instructions: 'Echo. [sim:echo=silent]' });
    const minted = await mintWithKey(app, owner, silent);
    const caller = await transport.connect(app, minted);
    caller.speak(25);
    await waitFor(
      () => (app.app.voice.media!.relays.get(minted.sessionId)?.stats.assistantWithheldBytes ?? 0) > 0 || undefined,
      'the echo to come back while the gate is closed',
    );
    t.equal(caller.heardBytes(), 0, 'the caller heard nothing while the gate was closed');
    await endWithKey(app, owner, minted.sessionId);

    // The simulator answers a turn: its transcript opens the gate, then the caller hears it.
    const talker = await voiceAssistant(app, owner);
    const answered = await mintWithKey(app, owner, talker);
    const second = await transport.connect(app, answered);
    second.speak(40);
    second.silence(40);
    await waitFor(() => (second.heardBytes() > 0 ? true : undefined), 'the answer, once the gate opened');
    t.equal(live(app, answered.sessionId).gate.isOpen, true, 'audio came with the gate open');
    await endWithKey(app, owner, answered.sessionId);
  });

  t.test(
    `${transport.name}: the end — the caller is told why (as its audience sees it) and let go; settled once`,
    async (t) => {
      const { app, owner } = await setup();
      const assistant = await voiceAssistant(app, owner);
      const byClient = await mintWithKey(app, owner, assistant);
      const caller = await transport.connect(app, byClient);
      const first = await endWithKey(app, owner, byClient.sessionId);
      t.match(first.body, { status: 'ended', endReason: null });
      t.same(await caller.ended(), { endReason: null }, 'ended by the client: the caller is told null');
      const again = await endWithKey(app, owner, byClient.sessionId);
      t.same(again.body, first.body, 'ending again answers the same final figures');
      t.match(await rowOf(app, byClient.sessionId), { state: 'ended', billableSeconds: first.body.billableSeconds });
      const settled = await app.database.sql<{ n: number }[]>`
        select count(*)::int as n from usage_reservations
        where voice_session_id = ${byClient.sessionId} and status = 'settled'`;
      t.ok(settled[0]!.n <= 1, 'at most one settled grant for the call');

      const byService = await mintWithKey(app, owner, assistant);
      const other = await transport.connect(app, byService);
      void live(app, byService.sessionId).end('max_duration');
      t.same(await other.ended(), { endReason: 'max_duration' }, 'ended by the service: the owner sees the reason');
    },
  );

  t.test(
    `${transport.name}: presence — billed only while a caller is connected; a hang-up ends the call`,
    async (t) => {
      const { app, owner } = await setup();
      const assistant = await voiceAssistant(app, owner);

      // Nobody connects: the call ends `disconnected` after the join timeout, billed nothing.
      const lonely = await mintWithKey(app, owner, assistant);
      await waitFor(
        async () => ((await rowOf(app, lonely.sessionId))?.state === 'ended' ? true : undefined),
        'the unjoined call to end',
        JOIN_TIMEOUT_SECONDS * 1000 + 10_000,
      );
      t.match(await rowOf(app, lonely.sessionId), { state: 'ended', endReason: 'disconnected', billableSeconds: 0 });

      // The caller connects late and hangs up: billed from the join, ended `disconnected` after the grace period.
      const late = await mintWithKey(app, owner, assistant);
      await new Promise((r) => setTimeout(r, 700));
      const caller = await transport.connect(app, late);
      const joinedAt = Date.now();
      caller.speak(10);
      await new Promise((r) => setTimeout(r, 1200));
      caller.hangUp();
      const hungUpAt = Date.now();
      await waitFor(
        async () => ((await rowOf(app, late.sessionId))?.state === 'ended' ? true : undefined),
        'the call to end after the hang-up',
        MEDIA_GRACE_MS + 10_000,
      );
      const row = await rowOf(app, late.sessionId);
      t.equal(row!.endReason, 'disconnected', 'a caller who went away ends the call disconnected');
      const connectedSeconds = (hungUpAt - joinedAt) / 1000;
      t.ok(
        row!.billableSeconds >= 1 && row!.billableSeconds <= Math.ceil(connectedSeconds) + 1,
        `billed ${row!.billableSeconds} s for ${connectedSeconds.toFixed(1)} s connected (whole seconds, rounded up)`,
      );
    },
  );
}
