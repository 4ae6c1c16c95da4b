import t from 'tap';
import { simulatedWords } from '../../src/providers/voice/index.js';
import { addDocumentTerms } from '../../src/retrieval/index.js';
import {
  endWithKey,
  live,
  mintWithKey,
  ndjsonReader,
  openGate,
  ownerWithVoice,
  speak,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from './helpers.js';

t.test(
  "a delegated turn is answered from the owner's documents: pending_backend, then backend_answer; sources stored",
  async (t) => {
    const app = await startVoiceApp(t);
    const owner = await ownerWithVoice(app);
    // The simulator delegates the end of the first utterance to Parley instead of answering itself.
    const assistant = await voiceAssistant(app, owner, { instructions: 'Answer from the documents. [sim:delegate]' });
    const sql = app.database.sql;
    const words = simulatedWords(1, 6);
    const passage = `Zebracorn policy: ${words.join(' ')} questions are answered at the front desk, which opens at nine.`;
    // A ready document, indexed the way ingestion indexes it (passage tsvector + the assistant's term statistics).
    await sql.begin(async (tx) => {
      await tx`insert into documents (id, assistant_id, account_id, type, name, status, chunk_count)
             values ('doc_voicefaq', ${assistant.id}, ${owner.accountId}, 'text', 'Front desk FAQ', 'ready', 1)`;
      await tx`insert into document_chunks (document_id, assistant_id, ordinal, heading, content, tsv)
             values ('doc_voicefaq', ${assistant.id}, 0, 'Front desk', ${passage},
                     setweight(to_tsvector('english', 'Front desk'), 'A') || setweight(to_tsvector('english', ${passage}), 'B'))`;
      await addDocumentTerms(tx, assistant.id, 'doc_voicefaq');
    });

    const minted = await mintWithKey(app, owner, assistant, { capabilities: ['playback_gate'] });
    const gate = ndjsonReader(await openGate(app, minted));
    t.match(await gate.next(), { reason: 'start' });
    const session = live(app, minted.sessionId);
    const spoken: string[] = [];
    session.subscribe({ onOutputTranscript: (d) => void spoken.push(d.text) });
    speak(session, 6);

    const reasons: string[] = [];
    for (;;) {
      const line = await gate.next();
      if (line.type !== 'gate') continue;
      if (reasons.at(-1) !== line.reason) reasons.push(line.reason);
      if (line.reason === 'backend_answer') {
        t.equal(line.state, 'open', 'the grounded answer may be heard');
        break;
      }
      if (line.reason === 'pending_backend') t.equal(line.state, 'closed', 'closed while the answer is fetched');
    }
    t.same(reasons, ['user_speaking', 'pending_backend', 'backend_answer']);
    await waitFor(() => spoken.join(' ').includes('nine.'), 'the assistant to speak the grounded answer');
    t.equal(
      spoken.join(' '),
      passage,
      "what is spoken is the owner's document, word for word (the simulator speaks the commentary)",
    );

    await endWithKey(app, owner, minted.sessionId);
    const messages =
      await sql`select role, content, sources, outcome from messages where conversation_id = ${minted.conversationId} order by created_at, id`;
    const answer = messages.find((m) => m.role === 'assistant');
    t.ok(answer, 'the assistant turn is stored');
    t.match(
      answer,
      { outcome: 'answered', sources: [{ documentId: 'doc_voicefaq', name: 'Front desk FAQ' }] },
      'with its sources',
    );
    t.match(answer!.content, /Zebracorn/);
    t.equal(messages[0]!.role, 'user');
  },
);

t.test('a delegated turn with nothing in the documents: no_answer, nothing invented', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { instructions: '[sim:delegate]' });
  const minted = await mintWithKey(app, owner, assistant, { capabilities: ['playback_gate'] });
  const session = live(app, minted.sessionId);
  speak(session, 3);
  await waitFor(() => session.gate.current.reason === 'backend_answer', 'the answer');
  await endWithKey(app, owner, minted.sessionId);
  const [answer] = await app.database
    .sql`select outcome, sources from messages where conversation_id = ${minted.conversationId} and role = 'assistant'`;
  t.match(answer, { outcome: 'no_answer', sources: [] });
});
