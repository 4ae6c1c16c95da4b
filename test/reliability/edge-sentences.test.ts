import t from 'tap';
import { composeExtractiveAnswer, splitSentences } from '../../src/providers/chat/local.js';

/** The offline answer engine quoted "costs 4.99 euros" as "costs 4." (it split on every period). */
const answer = (content: string, question: string) =>
  composeExtractiveAnswer({
    passages: [{ documentName: 'Prices', heading: null, content }],
    question,
    voiceUnavailable: false,
  });

t.test('numbers are quoted whole', async (t) => {
  t.match(
    answer('Our basic plan costs 4.99 euros per month. Cancel any time.', 'How much does the plan cost?'),
    /costs 4\.99 euros per month\./,
  );
  t.match(
    answer('Shipping is 1,234.56 USD for pallets. Parcels ship free.', 'What does shipping cost for pallets?'),
    /1,234\.56 USD for pallets\./,
  );
  t.match(
    answer('Use version 2.10.3 or later. Older versions lack export.', 'Which version should I use?'),
    /version 2\.10\.3 or later\./,
  );
  t.match(
    answer('The water is heated to 37.5 degrees. It is safe.', 'How warm is the water heated?'),
    /37\.5 degrees\./,
  );
});

t.test('abbreviations, initials and URLs do not end a sentence', async (t) => {
  t.same(splitSentences('Bring e.g. a passport. Dr. Smith sees you at 3 p.m. Tomorrow works too.'), [
    'Bring e.g. a passport.',
    'Dr. Smith sees you at 3 p.m. Tomorrow works too.',
  ]);
  t.same(splitSentences('J. R. R. Tolkien wrote it. Read it.'), ['J. R. R. Tolkien wrote it.', 'Read it.']);
  t.same(splitSentences('See https://example.com/docs/v1.2/index.html for details. Then sign in.'), [
    'See https://example.com/docs/v1.2/index.html for details.',
    'Then sign in.',
  ]);
  t.match(
    answer(
      'Read the guide at https://docs.example.com/setup.html before you start. It is short.',
      'Where is the setup guide?',
    ),
    /https:\/\/docs\.example\.com\/setup\.html before you start\./,
  );
});

t.test('ordinary sentence ends still split', async (t) => {
  t.same(splitSentences('It works. Really?! Yes!  He said "Stop." Then   left'), [
    'It works.',
    'Really?!',
    'Yes!',
    'He said "Stop."',
    'Then left',
  ]);
  t.same(splitSentences('Wait... and see. Done.'), ['Wait... and see.', 'Done.']);
  t.same(splitSentences(''), []);
});
