import t from 'tap';
import { readWavHeader } from '../../../src/voice/index.js';
import { RecordingLinkSigner } from '../../../src/voice/recording/signed-link.js';
import { TEST_SECRET_KEY } from '../../helpers/app.js';
import { bearer, createOwner } from '../../helpers/identity.js';
import { startVoiceApp } from '../helpers.js';
import { recordedCall } from '../recording-store/recorded-call.js';

/**
 * Signed, expiring recording links, through the real app (Postgres, Redis, the simulator): the owner asks for a link,
 * anyone holding it plays the WAV (Range works) without credentials; an expired or altered link is refused with its
 * own code; a deleted conversation's link stops working.
 */

const linkPath = (m: { conversationId: string; sessionId: string }) =>
  `/api/v1/conversations/${m.conversationId}/recordings/${m.sessionId}/url`;

t.test(
  'a signed link plays without credentials, with Range, until it expires; altered links are refused',
  async (t) => {
    const app = await startVoiceApp(t, {
      env: { RECORDING_URL_TTL_SECONDS: '600', PUBLIC_URL: 'http://recordings.test' },
    });
    const { owner, minted } = await recordedCall(app, { stored: true });

    const asked = await fetch(`${app.url}${linkPath(minted)}?ttlSeconds=120`, { headers: bearer(owner.secret) });
    t.equal(asked.status, 200);
    const link = (await asked.json()) as { url: string; expiresAt: string };
    const expiresIn = Date.parse(link.expiresAt) - Date.now();
    t.ok(expiresIn > 100_000 && expiresIn <= 120_000, 'expires when asked (120 s)');
    t.ok(link.url.startsWith('http://recordings.test/api/v1/recordings/'), 'under PUBLIC_URL');
    const local = (url: string) => `${app.url}${new URL(url).pathname}${new URL(url).search}`;

    const full = await fetch(local(link.url));
    t.equal(full.status, 200, 'no credentials needed');
    t.equal(full.headers.get('content-type'), 'audio/wav');
    const wav = Buffer.from(await full.arrayBuffer());
    t.match(readWavHeader(wav), { channels: 2 });
    const part = await fetch(local(link.url), { headers: { range: 'bytes=0-43' } });
    t.equal(part.status, 206);
    t.equal(part.headers.get('content-range'), `bytes 0-43/${wav.length}`);
    t.same(Buffer.from(await part.arrayBuffer()), wav.subarray(0, 44), 'the range is the bytes asked for');

    // Default: the configured TTL; more than it: refused with the field named.
    const byDefault = (await (
      await fetch(`${app.url}${linkPath(minted)}`, { headers: bearer(owner.secret) })
    ).json()) as any;
    const defaultIn = Date.parse(byDefault.expiresAt) - Date.now();
    t.ok(defaultIn > 590_000 && defaultIn <= 600_000, 'RECORDING_URL_TTL_SECONDS by default');
    const tooLong = await fetch(`${app.url}${linkPath(minted)}?ttlSeconds=601`, { headers: bearer(owner.secret) });
    t.equal(tooLong.status, 400);
    t.match(await tooLong.json(), { code: 'VALIDATION_FAILED', error: /ttlSeconds/ });

    // Altered: a later expiry, another session, a changed signature.
    const url = new URL(local(link.url));
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    const other = new URL(url);
    other.pathname = other.pathname.replace(minted.sessionId, 'vs_someoneelse');
    const flipped = new URL(url);
    const sig = url.searchParams.get('signature')!;
    flipped.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    for (const [what, u] of [
      ['a later expiry', later],
      ['another session', other],
      ['a changed signature', flipped],
    ] as const) {
      const res = await fetch(u);
      t.equal(res.status, 403, `${what} is refused`);
      t.match(await res.json(), { code: 'VOICE_RECORDING_LINK_INVALID' });
    }
    const unsigned = await fetch(`${url.origin}${url.pathname}`);
    t.equal(unsigned.status, 400, 'no signature: a validation error');

    // Expired: a genuine signature over a past expiry.
    const signer = new RecordingLinkSigner(TEST_SECRET_KEY);
    const past = Math.floor(Date.now() / 1000) - 1;
    const expired = await fetch(
      `${app.url}/api/v1/recordings/${minted.sessionId}?${signer.query(minted.sessionId, past)}`,
    );
    t.equal(expired.status, 410);
    t.match(await expired.json(), { code: 'VOICE_RECORDING_LINK_EXPIRED' });

    // Another account cannot mint a link to it.
    const stranger = await createOwner(app.database.sql, { scopes: ['conversations:read'] });
    const theirs = await fetch(`${app.url}${linkPath(minted)}`, { headers: bearer(stranger.secret) });
    t.equal(theirs.status, 404);

    // Deleting the conversation ends the link and the recording.
    const deleted = await fetch(`${app.url}/api/v1/conversations/${minted.conversationId}`, {
      method: 'DELETE',
      headers: bearer(owner.secret),
    });
    t.equal(deleted.status, 200);
    t.equal((await fetch(local(link.url))).status, 404, 'the link plays nothing once the conversation is gone');
    t.notOk(await app.app.voice.recordings!.exists(minted.sessionId), 'the recording is gone');
  },
);
