import t from 'tap';
import { chunkText } from '../../../src/documents/chunker.js';
import { composeExtractiveAnswer, LOCAL_NO_ANSWER } from '../../../src/providers/chat/local.js';
import { spokenAnswer } from '../../../src/providers/voice/local/answer.js';
import { snippetOf } from '../../../src/retrieval/service.js';

/**
 * The local answer engine on a small document, chunked as an upload is: it quotes the sentences that answer the
 * question and nothing around them, never glues a title line onto the first sentence, and does not answer one topic
 * with another.
 */
const DOCUMENT = [
  'Kettle price list',
  'The blue kettle costs 25 euros. The red kettle costs 30 euros and boils faster.',
  'Every kettle comes with a two year warranty.',
  '',
  'Shipping',
  'Orders ship within two working days. Delivery is free over 50 euros.',
  '',
  '## Returns',
  'Returns are free within 30 days of delivery.',
].join('\n');

const [body, returns] = chunkText(DOCUMENT).map((c) => ({ ...c, documentName: 'Kettles' }));
/** The quote for a question, given the passages best first (as retrieval ranks them). */
const quoted = (question: string, passages = [body!, returns!]) => {
  const answer = composeExtractiveAnswer({ passages, question, voiceUnavailable: false });
  return answer.split('\n\n')[1] ?? answer;
};

t.test('the best-matching sentence only, the title apart', async (t) => {
  t.equal(quoted('How much does the blue kettle cost?'), 'The blue kettle costs 25 euros.');
  t.equal(quoted('Which kettle boils faster?'), 'The red kettle costs 30 euros and boils faster.');
  t.equal(quoted('Is there a warranty?'), 'Every kettle comes with a two year warranty.');
});

t.test('a question about one topic is answered from that topic', async (t) => {
  t.equal(quoted('How long does shipping take?'), 'Orders ship within two working days.');
  t.equal(quoted('Can I return a kettle?', [returns!, body!]), 'Returns are free within 30 days of delivery.');
  t.equal(quoted('How long does shipping take?', [returns!, body!]), 'Orders ship within two working days.');
  t.equal(
    composeExtractiveAnswer({
      passages: [{ documentName: 'Returns', heading: null, content: 'Returns are free within 30 days of delivery.' }],
      question: 'How long does shipping take?',
      voiceUnavailable: false,
    }),
    LOCAL_NO_ANSWER,
    'a passage that does not speak of it is not quoted as the answer',
  );
});

t.test(
  'the chunker keeps the document as an upload does: plain titles inside, the Markdown heading apart',
  async (t) => {
    t.match(body, { heading: null, content: /^Kettle price list\nThe blue kettle/ });
    t.match(returns, { heading: 'Returns', content: 'Returns are free within 30 days of delivery.' });
    t.equal(
      snippetOf(body!.content, 'blue kettle'),
      body!.content
        .split('\n')
        .slice(1, 3)
        .join(' ')
        .concat(' ', 'Orders ship within two working days. Delivery is free over 50 euros.'),
      'the snippet leaves the titles out',
    );
  },
);

t.test('the local voice says the sentence, not the title', async (t) => {
  const commentary = [body!, returns!].map((p) => p.content).join('\n…\n');
  t.equal(spokenAnswer(commentary, 'How much does the blue kettle cost?'), 'The blue kettle costs 25 euros.');
});
