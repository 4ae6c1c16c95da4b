import t from 'tap';
import { TranscriptAssembler, type TranscriptTurn } from '../../src/voice/session/transcripts.js';

/** The caller's stored turns: one per question handed over, however late the answers come. */
t.test('a question handed over ends the caller turn: words spoken after it are the next turn', async (t) => {
  const stored: TranscriptTurn[] = [];
  const turns = new TranscriptAssembler((turn) => stored.push(turn));

  turns.add('user', 'how much does', 0);
  turns.add('user', 'the premium plan cost', 900);
  t.equal(turns.pendingQuestion(), 'how much does the premium plan cost');
  turns.questionAsked(2000);
  // A late fragment of the same utterance (it started before the question's end) stays in it.
  turns.add('user', 'please', 1800);
  // The caller asks again before the first answer is spoken: a second question, not more of the first.
  turns.add('user', 'where are notes kept', 3500);
  t.same(
    stored.map((s) => [s.role, s.text]),
    [['user', 'how much does the premium plan cost please']],
    'the first question is stored on its own',
  );
  t.equal(turns.pendingQuestion(), 'where are notes kept', 'and the second is grounded on its own words');

  turns.add('assistant', 'The premium plan costs 4.99 euros.');
  turns.flush();
  t.same(
    stored.map((s) => [s.role, s.text]),
    [
      ['user', 'how much does the premium plan cost please'],
      ['user', 'where are notes kept'],
      ['assistant', 'The premium plan costs 4.99 euros.'],
    ],
  );
});

t.test('without a question handed over, the caller words join until the assistant speaks', async (t) => {
  const stored: TranscriptTurn[] = [];
  const turns = new TranscriptAssembler((turn) => stored.push(turn));
  turns.add('user', 'hello', 0);
  turns.add('user', 'is anyone there', 5000);
  turns.add('assistant', 'Yes, how can I help?');
  turns.questionAsked(6000); // the assistant is speaking: no caller turn to end
  turns.add('assistant', 'Ask me anything.');
  turns.flush();
  t.same(
    stored.map((s) => [s.role, s.text]),
    [
      ['user', 'hello is anyone there'],
      ['assistant', 'Yes, how can I help? Ask me anything.'],
    ],
  );
});
